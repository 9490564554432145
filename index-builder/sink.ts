/**
 * The contract between feed parsers and the merger.
 *
 * A parser reads one source in its publisher's format and reports what it
 * finds to a BuildSink: ranges with layer values, plus a few per-ASN facts.
 * Parsers know nothing about layers' precedence or the file format.
 */
import type { Addr, Family } from '../src/net/ip.ts';
import type { NetworkType } from '../src/index/record.ts';

/** Location facts of a range. Empty strings are normalised to undefined. */
export interface GeoValue {
  countryCode?: string; // ISO 3166-1 alpha-2, upper case
  region?: string;
  city?: string;
  postalCode?: string;
  latitude?: number;
  longitude?: number;
  timezone?: string; // IANA zone name; filled from coordinates when the feed has none
}

/** An RIR allocation/assignment block. */
export interface AllocationValue {
  registry: string; // arin, ripencc, apnic, lacnic, afrinic, iana
  countryCode?: string;
  status: string; // allocated, assigned, reserved, available
  date?: string; // YYYY-MM-DD when known
  /** ISO date of the delegation file stating this (its version line), for bogon precedence. */
  asOf?: string;
  /** The block as published (start + count), which may not be a single CIDR. */
  blockStart: Addr;
  blockEnd: Addr;
}

/** A routed prefix and its origin(s). */
export interface RouteValue {
  prefixLen: number;
  /** Origin ASNs; more than one means MOAS (multiple-origin) or an AS-set. */
  origins: number[];
  /** True when the origin is an AS-set (ambiguous origin). */
  asSet?: boolean;
}

/** A validated ROA payload (VRP). */
export interface VrpValue {
  family: Family;
  asn: number;
  start: Addr;
  end: Addr;
  prefixLen: number;
  maxLength: number;
}

/** Network categories a range can carry (see interface.md cidr-list keys). */
export type Category =
  | 'datacenter'
  | 'vpn'
  | 'proxy'
  | 'privacy_relay'
  | 'mobile'
  | 'content'
  | 'network_service_provider'
  | 'webhook'
  | 'messaging'
  | 'threat';

export const CATEGORIES: readonly Category[] = [
  'datacenter',
  'vpn',
  'proxy',
  'privacy_relay',
  'mobile',
  'content',
  'network_service_provider',
  'webhook',
  'messaging',
  'threat',
];

/** A named provider's published range (cloud, CDN, SaaS, VPN...). */
export interface ProviderValue {
  category: Category;
  /** Operator name as published, e.g. "Amazon Web Services"; used for network.operator. */
  provider?: string;
  /** A product/service inside the provider, e.g. "EC2", "hooks". */
  service?: string;
  /** Provider region/location label, e.g. "us-east-1". */
  region?: string;
}

/** A Spamhaus DROP/EDROP (or similar) listing. */
export interface ThreatListValue {
  list: string; // e.g. "spamhaus-drop"
  reference?: string; // e.g. "SBL123456"
}

/** ASN-DROP context for an ASN (spec 2.5 asndrop). */
export interface AsnDropValue {
  asn: number;
  asName?: string;
  rir?: string;
  domain?: string;
  countryCode?: string;
}

/** A threat-feed sidecar entry for a single address (Feodo Tracker). */
export interface ThreatFeedValue {
  malware?: string;
  firstSeen?: string; // ISO 8601
  lastSeen?: string; // ISO 8601
  port?: number;
  status?: string;
}

/** What a parser reports to. Ranges are inclusive and within one family. */
export interface BuildSink {
  geo(family: Family, start: Addr, end: Addr, value: GeoValue): void;
  /**
   * Optional: an IPv6 location range with each bound as four u32 words (most
   * significant first), for a sink that stores words (a large database's
   * millions of ranges then cost no BigInts). The arrays are only valid during the call.
   */
  geo6Words?(start: Uint32Array, end: Uint32Array, value: GeoValue): void;
  /** Routed-ASN ranges with the org name (asn-csv). */
  asn(family: Family, start: Addr, end: Addr, asn: number, org?: string): void;
  /** ASN -> name (asn-info); earlier sources win over later ones for the same ASN. */
  asnName(asn: number, name: string): void;
  allocation(family: Family, start: Addr, end: Addr, value: AllocationValue): void;
  route(family: Family, start: Addr, end: Addr, value: RouteValue): void;
  vrp(value: VrpValue): void;
  provider(family: Family, start: Addr, end: Addr, value: ProviderValue): void;
  /** Every announced range of this ASN gets the category (weaker than a range list). */
  asnCategory(asn: number, category: Category, label?: string): void;
  /** The network type an ASN's operator declares (peeringdb-net); earlier sources win for the same ASN. */
  asnNetworkType(asn: number, type: NetworkType): void;
  crawler(family: Family, start: Addr, end: Addr, crawlerKey: string): void;
  torExit(family: Family, start: Addr, end: Addr): void;
  threatList(family: Family, start: Addr, end: Addr, value: ThreatListValue): void;
  asnDrop(value: AsnDropValue): void;
  threatFeed(family: Family, start: Addr, end: Addr, value: ThreatFeedValue): void;
  /**
   * An `overrides` source's accepted entries, one JSON object a line: kept
   * apart in the file and laid over every lookup, so they outrank every feed
   * (src/lookup/overrides/). Optional: sinks that record claims only ignore them.
   */
  overrides?(jsonLines: readonly string[]): void;
  /** `asOf`: ISO date of the bogon list (newer registry allocations outrank it). */
  bogon(family: Family, start: Addr, end: Addr, asOf?: string): void;
}

/** One manifest entry as given in feeds.json. */
export interface ManifestSource {
  type: string;
  path: string;
  category?: string;
  provider?: string;
  crawler?: string;
  format?: string;
  /** The publisher's date (`YYYY-MM-DD`) when the file states none. */
  date?: string;
  [key: string]: unknown;
}
