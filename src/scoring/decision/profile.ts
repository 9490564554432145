/**
 * The decision profile of a record: which kind of network the policy should
 * treat it as. First matching rule wins; the order is the precedence among
 * facts that stand together (the builder already dropped a third-party VPN
 * claim on a publisher's relay egress: index-builder/merge/precedence.ts).
 */
import { Flag, type IndexRecord, type NetworkType } from '../../index/record.ts';
import type { Classification, Profile } from '../types.ts';

const THREAT = Flag.DROP | Flag.THREAT_LIST | Flag.THREAT_FEED;
const INFRA = Flag.CONTENT | Flag.NETWORK_SERVICE_PROVIDER | Flag.WEBHOOK | Flag.MESSAGING;
/** Declared network types that are service infrastructure (a transit NSP often also has subscribers: not one). */
const INFRA_NETWORK_TYPES: ReadonlySet<NetworkType | null> = new Set<NetworkType>(['content', 'route_server', 'route_collector', 'network_services']);

/** A profile rule, with the phrase the reason chain shows when it matched. */
interface ProfileRule {
  profile: Profile;
  because: string;
  holds(record: IndexRecord, c: Classification): boolean;
}

const RULES: readonly ProfileRule[] = [
  // DNS proof is caller-independent and specific to the address: it outranks list memberships.
  { profile: 'verified_crawler', because: 'reverse and forward DNS confirm a known crawler', holds: (_r, c) => c.is_verified_crawler },
  { profile: 'bogon', because: 'the address is not globally routable', holds: (_r, c) => c.traits.includes('non_routable') },
  { profile: 'threat_listed', because: 'the address is on a threat list', holds: (r) => (r.flags & THREAT) !== 0 },
  { profile: 'tor_exit', because: 'the address is a Tor exit', holds: (_r, c) => c.is_tor },
  { profile: 'vpn_provider', because: 'the address is in a VPN provider range', holds: (r) => (r.flags & Flag.VPN) !== 0 },
  { profile: 'open_proxy', because: 'the address is in a proxy range', holds: (r) => (r.flags & Flag.PROXY) !== 0 },
  { profile: 'privacy_relay', because: 'the address is privacy relay egress', holds: (_r, c) => c.is_privacy_relay },
  { profile: 'known_crawler_unverified', because: 'the address is in an official crawler range without DNS proof', holds: (_r, c) => c.is_known_crawler },
  { profile: 'vpn_provider', because: 'the network belongs to a VPN provider', holds: (r) => (r.flags & Flag.VPN_ASN) !== 0 },
  { profile: 'ordinary_datacenter', because: 'the address is in a cloud or hosting range', holds: (r) => (r.flags & Flag.DATACENTER) !== 0 },
  { profile: 'infrastructure_service', because: 'the provider declares the range as service infrastructure', holds: (r) => (r.flags & INFRA) !== 0 },
  { profile: 'mobile_carrier', because: 'the address is on a mobile carrier network', holds: (_r, c) => c.is_mobile },
  { profile: 'ordinary_datacenter', because: 'the network belongs to a hosting provider', holds: (r) => (r.flags & Flag.DATACENTER_ASN) !== 0 },
  // Below: no list speaks for the address, so the usage comes from the network type its operator declares (or none).
  { profile: 'residential', because: "the network's operator declares a cable/DSL/ISP access network", holds: (_r, c) => c.usage_type === 'isp' },
  { profile: 'infrastructure_service', because: "the network's operator declares a content or network-service network", holds: (r) => INFRA_NETWORK_TYPES.has(r.networkType) },
  { profile: 'unknown', because: "the network's declared type (business, education, government, non-profit or transit) has no profile of its own", holds: (_r, c) => c.usage_type !== 'unknown' },
];

/** The profile of a record and why it was chosen. */
export function assignProfile(record: IndexRecord, classification: Classification): { profile: Profile; because: string } {
  for (const rule of RULES) {
    if (rule.holds(record, classification)) return { profile: rule.profile, because: rule.because };
  }
  // Absence is not evidence: the policy gives this profile the trust of an ordinary address.
  return { profile: 'unknown', because: 'no network-type evidence: no list or declared network type says what kind of network this is' };
}
