/**
 * IndexRecord fixtures, one per decision profile, shaped as the index
 * builder produces them (flags are unions of the layers covering the address).
 */
import { Flag, type IndexRecord, type RouteInfo } from '../../src/index/record.ts';
import type { ScoringContext } from '../../src/scoring/types.ts';

export const NO_PROOF: ScoringContext = { verifiedCrawler: null };

/** A routed, allocated, geolocated address with no list memberships. */
export function baseRecord(over: Partial<IndexRecord> = {}): IndexRecord {
  return {
    flags: 0,
    geo: { countryCode: 'US', region: 'Virginia', city: 'Ashburn', postalCode: null, latitude: 39.04, longitude: -77.49, timezone: 'America/New_York' },
    asn: { asn: 7922, name: 'Comcast Cable Communications, LLC' },
    allocation: { cidr: '73.0.0.0/8', range: '73.0.0.0 - 73.255.255.255', registry: 'arin', countryCode: 'US', status: 'allocated', date: '2005-04-19' },
    route: route('73.128.0.0/10', 7922),
    provider: null,
    crawler: null,
    specialUse: null,
    threatList: null,
    threatFeed: null,
    networkType: null,
    ...over,
  };
}

/** A single-origin route with RPKI status `valid`. */
export function route(prefix: string, asn: number, over: Partial<RouteInfo> = {}): RouteInfo {
  return { prefix, originAsn: asn, origins: [asn], rpkiStatus: 'valid', originConflict: false, ...over };
}

export interface ProfileFixture {
  name: string;
  record: IndexRecord;
  ctx: ScoringContext;
}

/** One fixture per profile the policy knows. */
export const PROFILE_FIXTURES: Record<string, ProfileFixture> = {
  // Comcast declares its network Cable/DSL/ISP in PeeringDB.
  residential: { name: 'residential', record: baseRecord({ networkType: 'cable_dsl_isp' }), ctx: NO_PROOF },
  mobile_carrier: {
    name: 'mobile_carrier',
    record: baseRecord({
      flags: Flag.MOBILE,
      asn: { asn: 21928, name: 'T-Mobile USA, Inc.' },
      route: route('172.56.0.0/16', 21928),
      provider: { name: 'T-Mobile USA', category: 'mobile', service: null, region: null },
    }),
    ctx: NO_PROOF,
  },
  ordinary_datacenter: {
    name: 'ordinary_datacenter',
    record: baseRecord({
      flags: Flag.DATACENTER,
      asn: { asn: 16509, name: 'AMAZON-02' },
      route: route('3.5.140.0/22', 16509),
      provider: { name: 'Amazon Web Services', category: 'datacenter', service: 'EC2', region: 'ap-northeast-2' },
    }),
    ctx: NO_PROOF,
  },
  infrastructure_service: {
    name: 'infrastructure_service',
    record: baseRecord({
      flags: Flag.CONTENT,
      asn: { asn: 13335, name: 'CLOUDFLARENET' },
      route: route('104.16.0.0/13', 13335),
      provider: { name: 'Cloudflare', category: 'content', service: null, region: null },
    }),
    ctx: NO_PROOF,
  },
  vpn_provider: {
    name: 'vpn_provider',
    record: baseRecord({
      flags: Flag.VPN | Flag.DATACENTER_ASN,
      asn: { asn: 39351, name: '31173 Services AB' },
      route: route('193.138.218.0/24', 39351),
      provider: { name: 'Mullvad', category: 'vpn', service: null, region: null },
    }),
    ctx: NO_PROOF,
  },
  open_proxy: {
    name: 'open_proxy',
    record: baseRecord({ flags: Flag.PROXY | Flag.DATACENTER_ASN, asn: { asn: 14061, name: 'DIGITALOCEAN-ASN' }, route: route('159.203.0.0/16', 14061) }),
    ctx: NO_PROOF,
  },
  tor_exit: {
    name: 'tor_exit',
    record: baseRecord({ flags: Flag.TOR_EXIT | Flag.DATACENTER_ASN, asn: { asn: 60729, name: 'Stiftung Erneuerbare Freiheit' }, route: route('185.220.101.0/24', 60729) }),
    ctx: NO_PROOF,
  },
  privacy_relay: {
    name: 'privacy_relay',
    record: baseRecord({
      flags: Flag.PRIVACY_RELAY | Flag.CONTENT,
      asn: { asn: 13335, name: 'CLOUDFLARENET' },
      route: route('104.28.0.0/16', 13335),
      provider: { name: 'iCloud Private Relay', category: 'privacy_relay', service: null, region: null },
    }),
    ctx: NO_PROOF,
  },
  known_crawler_unverified: {
    name: 'known_crawler_unverified',
    record: baseRecord({
      flags: Flag.CRAWLER_RANGE | Flag.CONTENT | Flag.DATACENTER | Flag.DATACENTER_ASN,
      asn: { asn: 15169, name: 'GOOGLE' },
      route: route('66.249.64.0/20', 15169),
      provider: { name: 'Google', category: 'content', service: null, region: null },
      crawler: 'googlebot',
    }),
    ctx: NO_PROOF,
  },
  verified_crawler: {
    name: 'verified_crawler',
    record: baseRecord({
      flags: Flag.CRAWLER_RANGE | Flag.CONTENT | Flag.DATACENTER | Flag.DATACENTER_ASN,
      asn: { asn: 15169, name: 'GOOGLE' },
      route: route('66.249.64.0/20', 15169),
      provider: { name: 'Google', category: 'content', service: null, region: null },
      crawler: 'googlebot',
    }),
    ctx: { verifiedCrawler: { key: 'googlebot', hostname: 'crawl-66-249-66-1.googlebot.com' } },
  },
  threat_listed: {
    name: 'threat_listed',
    record: baseRecord({
      flags: Flag.DROP,
      asn: null,
      route: route('1.10.16.0/20', 64500, { rpkiStatus: 'not_found' }),
      threatList: { list: 'spamhaus-drop', reference: 'SBL256894' },
    }),
    ctx: NO_PROOF,
  },
  bogon: {
    name: 'bogon',
    record: baseRecord({
      flags: Flag.SPECIAL_USE | Flag.BOGON,
      geo: null,
      asn: null,
      allocation: null,
      route: null,
      specialUse: { name: 'Private-Use', cidr: '10.0.0.0/8', rfc: 'RFC1918', kind: 'private', globallyReachable: false },
    }),
    ctx: NO_PROOF,
  },
  unknown: {
    name: 'unknown',
    record: baseRecord({ geo: null, asn: null, allocation: null, route: null }),
    ctx: NO_PROOF,
  },
};
