/**
 * Addresses taken from the real feed snapshots in shared/feeds, as records
 * shaped the way the index builds them from feeds.json, must come out as
 * their profile. Each fixture first checks that the feed really lists the
 * address, so the records cannot drift from the data they claim to stand for.
 *
 * Built from feeds.json (no geo source, no ARIN delegation, no RPKI source in
 * that manifest): geo is null, ARIN allocations are null, rpkiStatus is
 * 'unknown'. Routes are the RouteViews pfx2as 2024-04-06 most-specific
 * matches; ASN names come from the asn2org table.
 */
import { beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { readFileSync } from 'node:fs';
import { IndexReader } from '../../src/index/reader.ts';
import { Flag, type IndexRecord, type RouteInfo } from '../../src/index/record.ts';
import { parseCidr, parseIp } from '../../src/net/ip.ts';
import { DEFAULT_POLICY, assessRecord, type ScoringContext } from '../../src/scoring/index.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';
import { describeWithShared, SHARED_FEEDS_DIR } from '../helpers/shared-feeds.ts';

const FEEDS = `${SHARED_FEEDS_DIR}/`;
const feed = (path: string) => readFileSync(FEEDS + path, 'utf8');
const NO_PROOF: ScoringContext = { verifiedCrawler: null };

/** Whether any CIDR or address written in `text` covers the IPv4 address `ip`. */
function listed(text: string, ip: string): boolean {
  const addr = parseIp(ip)!;
  for (const m of text.matchAll(/\b\d{1,3}(?:\.\d{1,3}){3}(?:\/\d{1,2})?\b/g)) {
    const c = parseCidr(m[0]);
    if (c && c.family === 4 && addr.value >= c.start && addr.value <= c.end) return true;
  }
  return false;
}

const unknownRpki = (prefix: string, asn: number): RouteInfo => ({ prefix, originAsn: asn, origins: [asn], rpkiStatus: 'unknown', originConflict: false });

function record(over: Partial<IndexRecord>): IndexRecord {
  return { flags: 0, geo: null, asn: null, allocation: null, route: null, provider: null, crawler: null, specialUse: null, threatList: null, threatFeed: null, networkType: null, ...over };
}

// Range lists of feeds.json that would give an address an anonymity, infrastructure or threat flag.
const CATEGORY_LISTS = [
  'cloud/x4bnet-datacenter-ipv4.txt',
  'cloud/aws-ip-ranges.json',
  'cloud/google-cloud.json',
  'cloud/google-goog.json',
  'cloud/cloudflare-ips-v4.txt',
  'cloud/fastly-public-ip-list.json',
  'cloud/github-meta.json',
  'vpn/x4bnet-vpn-ipv4.txt',
  'relay/derived-x4bnet-apple-private-relay-ips.txt',
  'threat/spamhaus-drop_v4.json',
  'threat/spamhaus-edrop.txt',
  'tor/exit-addresses',
  'tor/torbulkexitlist',
  'bogons/fullbogons-ipv4.txt',
];

describeWithShared('real feed snapshots', () => {
  test('Tor exit 171.25.193.25 (tor/exit-addresses; AS198093 DFRI) → tor_exit', () => {
    expect(feed('tor/exit-addresses')).toMatch(/^ExitAddress 171\.25\.193\.25 /m);
    expect(listed(feed('threat/spamhaus-drop_v4.json'), '171.25.193.25')).toBe(false);
    expect(listed(feed('cloud/x4bnet-datacenter-ipv4.txt'), '171.25.193.25')).toBe(false);
    const r = record({
      flags: Flag.TOR_EXIT,
      asn: { asn: 198093, name: 'DFRI' },
      allocation: { cidr: '171.25.193.0/24', range: '171.25.193.0 - 171.25.193.255', registry: 'ripencc', countryCode: 'SE', status: 'assigned', date: '2012-01-13' },
      route: unknownRpki('171.25.193.0/24', 198093),
    });
    const a = assessRecord(r, NO_PROOF, DEFAULT_POLICY);
    expect(a.decision.profile).toBe('tor_exit');
    expect(a.classification).toMatchObject({ is_tor: true, is_proxy: true, proxy_type: 'tor', usage_type: 'tor' });
    expect(a.evidence.signals.map((s) => s.label)).toEqual(['tor_exit']);
  });

  test('iCloud Private Relay egress 104.28.28.1 (relay list prefix 104.28.28.0/26; AS13335) → privacy_relay', () => {
    expect(feed('relay/derived-x4bnet-apple-private-relay-ips.txt')).toMatch(/^104\.28\.28\.0\/26$/m);
    // Relay egress sits next to, but outside, Cloudflare's own published ranges.
    expect(listed(feed('cloud/cloudflare-ips-v4.txt'), '104.28.28.1')).toBe(false);
    const r = record({
      flags: Flag.PRIVACY_RELAY,
      asn: { asn: 13335, name: 'Cloudflare' },
      route: unknownRpki('104.28.28.0/24', 13335),
      provider: { name: 'iCloud Private Relay', category: 'privacy_relay', service: null, region: null },
    });
    const a = assessRecord(r, NO_PROOF, DEFAULT_POLICY);
    expect(a.decision.profile).toBe('privacy_relay');
    expect(a.classification.is_privacy_relay).toBe(true);
    expect(a.decision.guardrails_applied).toContain('privacy_relay_no_block');
    expect(Object.values(a.scenarios).map((s) => s.action)).not.toContain('block');
  });

  test('AWS EC2 3.5.140.10 (aws-ip-ranges 3.5.140.0/22 EC2 ap-northeast-2; AS16509 on the hosting ASN list) → ordinary_datacenter', () => {
    const aws = JSON.parse(feed('cloud/aws-ip-ranges.json')) as { prefixes: Array<{ ip_prefix: string; service: string; region: string }> };
    expect(aws.prefixes).toContainEqual(expect.objectContaining({ ip_prefix: '3.5.140.0/22', service: 'EC2', region: 'ap-northeast-2' }));
    expect(feed('asn/x4bnet-datacenter-ASN.txt')).toMatch(/^AS16509\b/m);
    const r = record({
      flags: Flag.DATACENTER | Flag.DATACENTER_ASN,
      asn: { asn: 16509, name: 'Amazon.com' },
      route: unknownRpki('3.5.140.0/24', 16509),
      provider: { name: 'Amazon Web Services', category: 'datacenter', service: 'EC2', region: 'ap-northeast-2' },
    });
    const a = assessRecord(r, NO_PROOF, DEFAULT_POLICY);
    expect(a.decision.profile).toBe('ordinary_datacenter');
    expect(a.network).toEqual({ category: 'hosting', operator: 'Amazon Web Services', operator_type: 'hosting', service_name: 'EC2' });
    expect(a.evidence.signals.map((s) => s.label)).toEqual(['datacenter_range']);
  });

  test('Googlebot 66.249.64.5 (googlebot.json 66.249.64.0/27; also goog.json and the datacenter list) → known crawler, verified with DNS proof', () => {
    expect(feed('crawlers/googlebot.json')).toContain('"66.249.64.0/27"');
    expect(listed(feed('cloud/google-goog.json'), '66.249.64.5')).toBe(true);
    expect(listed(feed('cloud/x4bnet-datacenter-ipv4.txt'), '66.249.64.5')).toBe(true);
    const r = record({
      flags: Flag.CRAWLER_RANGE | Flag.CONTENT | Flag.DATACENTER | Flag.DATACENTER_ASN,
      asn: { asn: 15169, name: 'Google' },
      route: unknownRpki('66.249.64.0/20', 15169),
      provider: { name: 'Google', category: 'content', service: null, region: null },
      crawler: 'googlebot',
    });
    const unverified = assessRecord(r, NO_PROOF, DEFAULT_POLICY);
    expect(unverified.decision.profile).toBe('known_crawler_unverified');
    expect(unverified.classification).toMatchObject({ is_known_crawler: true, is_verified_crawler: false, usage_type: 'crawler' });
    expect(unverified.network.service_name).toBe('googlebot');
    const proof = { verifiedCrawler: { key: 'googlebot', hostname: 'crawl-66-249-64-5.googlebot.com' } };
    const verified = assessRecord(r, proof, DEFAULT_POLICY);
    expect(verified.decision.profile).toBe('verified_crawler');
    expect(verified.scenarios.content.action).toBe('allow');
    expect(verified.scenarios.seo_crawler.action).toBe('allow');
  });

  test('DROP netblock 1.10.16.1 (spamhaus-drop_v4 1.10.16.0/20 SBL256894; not announced in the routing snapshot) → threat_listed', () => {
    expect(feed('threat/spamhaus-drop_v4.json')).toContain('{"cidr":"1.10.16.0/20","sblid":"SBL256894","rir":"apnic"}');
    const r = record({
      flags: Flag.DROP,
      allocation: { cidr: '1.10.16.0/20', range: '1.10.16.0 - 1.10.31.255', registry: 'apnic', countryCode: 'CN', status: 'allocated', date: '2011-04-12' },
      threatList: { list: 'spamhaus-drop', reference: 'SBL256894' },
    });
    const a = assessRecord(r, NO_PROOF, DEFAULT_POLICY);
    expect(a.decision.profile).toBe('threat_listed');
    expect(a.classification.threat_level).toBe('High');
    expect(a.score.verdict).toBe('block');
    expect(a.evidence.signals.map((s) => s.label)).toEqual(['hijacked_netblock', 'unrouted_address']);
  });

  test('73.162.10.20 (Comcast AS7922, on no category list, no network type in the snapshots) → no usage, allowed everywhere', () => {
    for (const list of CATEGORY_LISTS) expect({ list, listed: listed(feed(list), '73.162.10.20') }).toEqual({ list, listed: false });
    expect(feed('asn/x4bnet-datacenter-ASN.txt')).not.toMatch(/^AS7922\b/m);
    const r = record({ asn: { asn: 7922, name: 'Comcast' }, route: unknownRpki('73.0.0.0/8', 7922) });
    const a = assessRecord(r, NO_PROOF, DEFAULT_POLICY);
    // Nothing names the network's type: no guessed 'residential', and no penalty for the missing evidence.
    expect(a.classification).toMatchObject({ usage_type: 'unknown', confidence: 'low' });
    expect(a.network).toMatchObject({ category: null, operator: 'Comcast', operator_type: null });
    expect(a.decision).toMatchObject({ profile: 'unknown', action: 'allow', risk_level: 'low', confidence: 'low' });
    expect(Object.values(a.scenarios).map((s) => s.action)).toEqual(['allow', 'allow', 'allow', 'allow', 'allow', 'allow']);
    expect(a.score).toMatchObject({ band: 'good', verdict: 'allow' });
  });

  test('73.162.10.20 when PeeringDB declares AS7922 Cable/DSL/ISP → residential access ISP', () => {
    const r = record({ asn: { asn: 7922, name: 'Comcast' }, route: unknownRpki('73.0.0.0/8', 7922), networkType: 'cable_dsl_isp' });
    const a = assessRecord(r, NO_PROOF, DEFAULT_POLICY);
    expect(a.classification).toMatchObject({ usage_type: 'isp', confidence: 'medium' });
    expect(a.network).toMatchObject({ category: 'residential', operator: 'Comcast', operator_type: 'isp' });
    expect(a.decision).toMatchObject({ profile: 'residential', action: 'allow' });
  });
});

// The same addresses through a real index: the full feeds.json index when IPINTEL_FULL_INDEX names one
// (`bun run build-index --manifest <snapshots>/feeds.json --out /tmp/full.idx`), otherwise the
// fixture index's sources taken from the same snapshots (test/helpers/fixture-index.ts).
const FULL_INDEX = process.env.IPINTEL_FULL_INDEX;

describeWithShared(`real index (${FULL_INDEX ?? 'fixture subset of the snapshots'})`, () => {
  let reader: IndexReader;
  beforeAll(async () => {
    reader = IndexReader.open(FULL_INDEX ?? (await fixtureIndexPath(SHARED_FEEDS_DIR)));
  }, 180_000);

  const cases: Array<[string, string]> = [
    ['171.25.193.25', 'tor_exit'],
    ['104.28.28.1', 'privacy_relay'],
    ['3.5.140.10', 'ordinary_datacenter'],
    ['66.249.64.5', 'known_crawler_unverified'],
    ['1.10.16.1', 'threat_listed'],
    ['73.162.10.20', 'unknown'],
    ['10.1.2.3', 'bogon'],
  ];
  test.each(cases)('%s → %s', (ip, profile) => {
    const hit = reader.lookup(ip);
    expect(hit).not.toBeNull();
    const a = assessRecord(hit!.record, NO_PROOF, DEFAULT_POLICY);
    expect(a.decision.profile).toBe(profile as typeof a.decision.profile);
    expect(a.score.ip_score + a.score.risk_score).toBe(100);
  });
});
