/**
 * What the index answers for one address: the contract between the mapped
 * reader (src/index), the v1 assembler (src/lookup), scoring and crawlers.
 *
 * Every field is a fact from the feeds, computed at build time. Missing data
 * is null, never an invented value.
 */
import type { Family } from '../net/ip.ts';
import type { EvidenceKind } from './evidence-kinds.ts';

/** Bit flags of a record (category layers are unions, not "most specific"). */
export const Flag = {
  /** In a datacenter/cloud/hosting range list. */
  DATACENTER: 1 << 0,
  /** Announced by an ASN listed as hosting (weaker than a range list). */
  DATACENTER_ASN: 1 << 1,
  /** In a VPN provider range list. */
  VPN: 1 << 2,
  /** Announced by an ASN listed as VPN (weaker). */
  VPN_ASN: 1 << 3,
  PROXY: 1 << 4,
  /** iCloud Private Relay or other relay egress. */
  PRIVACY_RELAY: 1 << 5,
  MOBILE: 1 << 6,
  /** Content delivery (CDN) infrastructure. */
  CONTENT: 1 << 7,
  NETWORK_SERVICE_PROVIDER: 1 << 8,
  WEBHOOK: 1 << 9,
  MESSAGING: 1 << 10,
  /** In a generic threat CIDR list (cidr-list with category threat). */
  THREAT_LIST: 1 << 11,
  /** In Spamhaus DROP/EDROP. */
  DROP: 1 << 12,
  TOR_EXIT: 1 << 13,
  /** In an official crawler range feed. */
  CRAWLER_RANGE: 1 << 14,
  /** Listed in a full-bogon feed (unallocated or reserved space). */
  BOGON: 1 << 15,
  /** In an IANA special-purpose registry block. */
  SPECIAL_USE: 1 << 16,
  /** The threat-feed sidecar has this address. */
  THREAT_FEED: 1 << 17,
  /** Announced by an ASN on Spamhaus ASN-DROP. */
  ASN_DROP: 1 << 18,
} as const;

/**
 * The network type an ASN's operator declares (PeeringDB `info_type`), as a
 * fact of the record: resolved at build time for the announcing ASN.
 */
export type NetworkType =
  | 'cable_dsl_isp'
  | 'nsp'
  | 'content'
  | 'enterprise'
  | 'educational_research'
  | 'non_profit'
  | 'government'
  | 'route_server'
  | 'network_services'
  | 'route_collector';

/** Names of the flags, for the inspector and debugging. */
export const FLAG_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(Flag).map(([k, v]) => [v, k.toLowerCase()]),
);

export interface GeoInfo {
  countryCode: string | null;
  region: string | null;
  city: string | null;
  postalCode: string | null;
  latitude: number | null;
  longitude: number | null;
  /** IANA zone name, e.g. "America/New_York". */
  timezone: string | null;
}

export interface AsnInfo {
  asn: number;
  /** Local name (org) of the ASN. */
  name: string | null;
}

export interface AllocationInfo {
  /** The published block; a single CIDR when it is one, otherwise null. */
  cidr: string | null;
  /** "start - end" of the published block. */
  range: string;
  registry: string;
  countryCode: string | null;
  status: string;
  date: string | null;
}

/** RFC 6811 outcome; `unknown` when the index was built without VRPs. */
export type RpkiStatus = 'valid' | 'invalid' | 'not_found' | 'unknown';

export interface RouteInfo {
  /** The most specific announced prefix covering the address, CIDR text. */
  prefix: string;
  /** The origin ASN; null when the origin is ambiguous (AS-set). */
  originAsn: number | null;
  /** Every origin seen for the prefix (more than one: MOAS). */
  origins: number[];
  rpkiStatus: RpkiStatus;
  /** Several distinct origins announce this prefix. */
  originConflict: boolean;
}

export interface ProviderInfo {
  /** The operator, resolved by the builder's precedence (index-builder/merge/precedence.ts); never a data vendor. */
  name: string | null;
  /** The category the operator's claim declares (index-builder/sink.ts Category), `crawler` when only a crawler range's owner names it. */
  category: string;
  service: string | null;
  region: string | null;
}

/** An IANA special-purpose (or non-global) block covering the address. */
export interface SpecialUseInfo {
  /** Registry name, e.g. "Private-Use", "Documentation (TEST-NET-1)". */
  name: string;
  /** The block, CIDR text. */
  cidr: string;
  /** Defining RFC(s), e.g. "RFC1918". */
  rfc: string;
  /** Short machine value: private, loopback, link_local, documentation, reserved, shared, multicast, unspecified, benchmarking, ... */
  kind: string;
  globallyReachable: boolean;
}

export interface ThreatListInfo {
  list: string;
  reference: string | null;
}

export interface ThreatFeedInfo {
  malware: string | null;
  firstSeen: string | null;
  lastSeen: string | null;
  port: number | null;
  status: string | null;
}

/**
 * What an operator override (src/lookup/overrides/) says beyond the facts
 * it overlays on the record: scoring reads it to raise the
 * `operator_override` signal, apply the risk or verdict, and use the usage
 * type and category the operator named.
 */
export interface OverrideFacts {
  /** The override's prefix, CIDR text. */
  cidr: string;
  note: string | null;
  /** The organisation named (network.org) even where the index knows no ASN. */
  org: string | null;
  usageType: string | null;
  category: string | null;
  /** Risk points added after the signals (0: none). */
  risk: number;
  /** A fixed verdict (the risk moves into its band), or null. */
  verdict: 'allow' | 'monitor' | 'challenge' | 'block' | null;
  /** Kinds of evidence the operator spoke to (their signals count even when the index holds none of that kind). */
  kinds: readonly EvidenceKind[];
}

/** Every fact the index has for one address (sub-objects null when absent). */
export interface IndexRecord {
  flags: number;
  geo: GeoInfo | null;
  /** ASN and org from the ASN range layer. */
  asn: AsnInfo | null;
  allocation: AllocationInfo | null;
  route: RouteInfo | null;
  provider: ProviderInfo | null;
  /** Crawler registry key of the official range covering the address. */
  crawler: string | null;
  specialUse: SpecialUseInfo | null;
  threatList: ThreatListInfo | null;
  threatFeed: ThreatFeedInfo | null;
  /** Network type the announcing ASN declares (peeringdb-net); null when no source names one. */
  networkType: NetworkType | null;
  /** Set when an operator override covers the address (its named facts are already overlaid above). */
  readonly override?: OverrideFacts;
}

/** The answer of a lookup: the elementary interval and its record. */
export interface LookupHit {
  family: Family;
  /** Address looked up, canonical text (IPv4 for mapped addresses). */
  ip: string;
  /** First and last address of the elementary interval (canonical text). */
  rangeStart: string;
  rangeEnd: string;
  recordId: number;
  record: IndexRecord;
  /** The index the hit came from, for identity only: memos keyed by record id must not outlive a reload (absent in hand-made hits). */
  readonly index?: object;
}

/** Spec 2.5 threat_density, computed at build time per ASN. */
export interface ThreatDensity {
  threatNetworkCount: number;
  threatIpv4Addresses: number;
  totalIpv4Addresses: number;
}

/** Per-ASN facts for /v1/asn. */
export interface AsnDetails {
  asn: number;
  name: string | null;
  threatDensity: ThreatDensity;
  asnDrop: { asn: string; asName: string | null; rir: string | null; domain: string | null; countryCode: string | null } | null;
  /** Categories from asn-list sources (e.g. datacenter, vpn). */
  categories: string[];
}
