/**
 * Constants of the index file format shared by the writer (index-builder/)
 * and the reader (src/index/). The format is documented in
 * index-builder/FORMAT.md; change both together and bump FORMAT_VERSION.
 */

import type { NetworkType } from './record.ts';

/** First 8 bytes of every index file. */
export const MAGIC = 'IPINTIDX';
/**
 * 5: the FLAGS column carries the announcing ASN's network type code in
 * bits NETWORK_TYPE_SHIFT.. (NETWORK_TYPE_CODES).
 * 4: IPv6 lookups through a hash of the /32s that hold interval starts and a
 * direct table per /32 (V6HT, V6SB).
 * 3: a direct IPv4 table per /24 and geolocation inline in record rows (fewer
 * dependent memory reads per lookup), sections on 64-byte boundaries.
 * 2: sections checked by XXH3-64 instead of CRC-32 (faster to verify at start-up).
 */
export const FORMAT_VERSION = 5;
/** Fixed header size before the section directory. */
export const HEADER_SIZE = 64;
/** Size of one section directory entry. */
export const DIR_ENTRY_SIZE = 32;
/**
 * Every section starts on this alignment: typed array views need 8, and 64
 * (a cache line) makes each 64-byte record row one line instead of two.
 */
export const SECTION_ALIGN = 64;

/**
 * Bits of the first-level tables (4 MiB each). IPv4: 20 bits leave a handful
 * of intervals per slot in dense space. IPv6: almost all data sits in
 * 2000::/4, where 16 bits left 760k intervals in one slot; 20 bits split
 * that by 16. Readers derive the bits from the section length.
 */
export const V4_L1_BITS = 20;
export const V6_L1_BITS = 20;

/**
 * The IPv4 direct table has one u32 per /24. An entry with this bit set is
 * the record id of the one interval covering the whole /24 (nearly all /24s
 * of the default index): a lookup is then one memory read. Otherwise the
 * entry is the word offset of the /24's bucket in V4BK.
 */
export const V4_DIRECT_BITS = 24;
export const V4_DIRECT_RECORD = 0x80000000;

/**
 * IPv6: V6HT maps each /32 holding interval starts to a node of V6SB, a
 * table over the next bits of the address (at most this many) whose entries
 * are, like V4DT's, a record id (this bit set) or the interval to scan from.
 */
export const V6_SUB_MAX_BITS = 16;
export const V6_DIRECT_RECORD = 0x80000000;
/** Multiplier of the /32 hash (Fibonacci hashing: the top bits of w0 * this). */
export const V6_HASH_MULTIPLIER = 0x9e3779b1;

/** Section tags (4 ASCII bytes each). */
export const Section = {
  META: 'META', // msgpack: build info, sources, counts, table layouts
  STRING_OFFSETS: 'STRO', // u32[n+1] byte offsets into STRB
  STRING_BYTES: 'STRB', // UTF-8 bytes of all strings
  V4_STARTS: 'V4ST', // u32[n] interval starts, ascending, first is 0 (range text)
  V4_L1: 'V4L1', // u32[2^bits + 1] first-level table by the top V4_L1_BITS bits (range text)
  V4_DIRECT: 'V4DT', // u32[2^24]: per /24, a record id or a bucket offset
  V4_BUCKETS: 'V4BK', // buckets of the /24s that hold several intervals
  V6_STARTS: 'V6ST', // u32[4n] interval starts as 4 big-endian-ordered words
  V6_RECORDS: 'V6RC', // u32[n]
  V6_L1: 'V6L1', // u32[2^bits + 1] (addresses in /32s without starts; range text)
  V6_HASH: 'V6HT', // u32[2 * 2^h]: (/32 word, V6SB node offset + 1) pairs, 0 = empty slot
  V6_SUB: 'V6SB', // per-/32 nodes: [bits s, 2^s entries]
  RECORDS: 'RECS', // u32[RECORD_WIDTH * nrec], geolocation inline
  ASN: 'TASN',
  ALLOCATION: 'TALC',
  ROUTE: 'TRTE',
  PROVIDER: 'TPRV',
  THREAT_LIST: 'TTHL',
  THREAT_FEED: 'TTHF',
  SPECIAL_USE: 'TSPC',
  ASN_DETAILS: 'ASND', // rows sorted by ASN, for /v1/asn
  OVERRIDES: 'OVRD', // optional: the `overrides` sources' accepted entries as JSON lines, laid over lookups (src/lookup/overrides/)
} as const;

/**
 * Columns of a record row (u32 each). 0 means "none" for every id column.
 * The geolocation sits in the row itself (GEO_LAYOUT from column GEO on):
 * one cache line holds everything a location lookup reads.
 */
export const RecordCol = {
  ASN: 0,
  ALLOCATION: 1,
  ROUTE: 2,
  PROVIDER: 3,
  CRAWLER: 4, // string id of the crawler registry key
  THREAT_LIST: 5,
  THREAT_FEED: 6,
  SPECIAL_USE: 7,
  FLAGS: 8, // Flag bits below NETWORK_TYPE_SHIFT, the network type code above
  GEO: 9, // first of the GEO_LAYOUT columns
} as const;
export const RECORD_WIDTH = 16;

/**
 * The FLAGS column holds the record's Flag bits (src/index/record.ts) below
 * this bit and the network type code (index into NETWORK_TYPE_CODES, 0 none)
 * in the 4 bits from it: the 64-byte row has no free column.
 */
export const NETWORK_TYPE_SHIFT = 24;
export const NETWORK_TYPE_MASK = 0xf;
export const FLAG_BITS_MASK = (1 << NETWORK_TYPE_SHIFT) - 1;
/** Network type codes of the FLAGS column (stable: the position is the file's code). */
export const NETWORK_TYPE_CODES: readonly (NetworkType | null)[] = [
  null,
  'cable_dsl_isp',
  'nsp',
  'content',
  'enterprise',
  'educational_research',
  'non_profit',
  'government',
  'route_server',
  'network_services',
  'route_collector',
];

/** The inline geolocation columns of a record row, from RecordCol.GEO on. */
export const GEO_LAYOUT = ['s:countryCode', 's:region', 's:city', 's:postalCode', 'f:latitude', 'f:longitude', 's:timezone'] as const;
/** Set in the countryCode column when the record has a location (a location may have no country). */
export const GEO_PRESENT = 0x80000000;

/** Column layouts of the sub-tables: s = string id, u = u32, f = f32 (NaN = none). */
export const TableLayout = {
  [Section.ASN]: ['u:asn', 's:name'],
  [Section.ALLOCATION]: ['s:cidr', 's:range', 's:registry', 's:countryCode', 's:status', 's:date'],
  [Section.ROUTE]: ['s:prefix', 's:origins', 'u:rpki', 'u:flags'],
  [Section.PROVIDER]: ['s:name', 's:category', 's:service', 's:region'],
  [Section.THREAT_LIST]: ['s:list', 's:reference'],
  [Section.THREAT_FEED]: ['s:malware', 's:firstSeen', 's:lastSeen', 'u:port', 's:status'],
  [Section.SPECIAL_USE]: ['s:name', 's:cidr', 's:rfc', 's:kind', 'u:globallyReachable'],
  [Section.ASN_DETAILS]: [
    'u:asn',
    's:name',
    'u:threatNetworkCount',
    'u:threatIpv4Addresses',
    'u:totalIpv4Addresses',
    's:dropAsName',
    's:dropRir',
    's:dropDomain',
    's:dropCountryCode',
    'u:flags', // bit 0: on ASN-DROP; bits 1..: categories (ASN_CATEGORY_BITS)
  ],
} as const;

/** Route row flag bits. */
export const RouteFlag = { ORIGIN_CONFLICT: 1, AS_SET: 2 } as const;

/** RPKI status codes stored in route rows. */
export const RPKI_CODES = ['unknown', 'not_found', 'valid', 'invalid'] as const;

/** ASN-details flag bits: ASN-DROP plus categories from asn-list sources. */
export const ASN_DETAIL_DROP = 1;
export const ASN_CATEGORY_BITS: Record<string, number> = {
  datacenter: 1 << 1,
  vpn: 1 << 2,
  proxy: 1 << 3,
  privacy_relay: 1 << 4,
  mobile: 1 << 5,
  content: 1 << 6,
  network_service_provider: 1 << 7,
  webhook: 1 << 8,
  messaging: 1 << 9,
  threat: 1 << 10,
};

/** Metadata stored in the META section. */
export interface IndexMeta {
  formatVersion: number;
  builtAt: string; // ISO 8601
  builder: string;
  sources: SourceMeta[];
  counts: {
    v4Intervals: number;
    v6Intervals: number;
    records: number;
    strings: number;
    tables: Record<string, number>;
    asnDetails: number;
  };
  /** Whether VRPs were loaded (else every rpki status is "unknown"). */
  hasRpki: boolean;
  /** Evidence kinds with data behind them (src/index/evidence-kinds.ts), from the sources' kinds. */
  capabilities: Record<string, boolean>;
  /** Address families the routing data covers (absent in older files: every family when routing is held). */
  routedFamilies?: number[];
  /** Bogon intervals per family that yielded to newer registry allocation data (absent in older files). */
  bogonsYielded?: { v4: { intervals: number; addresses: number }; v6: { intervals: number; addresses: string } };
  /** Data credits required by the sources' licences. */
  attributions: string[];
  /**
   * `server`: the server built this file itself (first start or its feed
   * refresher), so the refresher may replace it. Absent: an operator's build,
   * never replaced behind their back.
   */
  managedBy?: 'server';
  /**
   * A build that kept the ids of a previous index (FORMAT.md, "Stable ids"):
   * that index's build time and the garbage this file carries (ids and
   * strings nothing refers to). Absent: ids numbered afresh, no garbage.
   */
  deadIds?: {
    previousBuiltAt: string;
    records: number;
    subTableRows: number;
    subTableRowsTotal: number;
    strings: number;
    stringBytes: number;
    stringTableBytes: number;
    /** IPv4 bucket words (V4BK) no /24 points to, of all its words (absent in the first files that kept ids). */
    v4BucketWords?: number;
    v4BucketWordsTotal?: number;
  };
}

export interface SourceMeta {
  type: string;
  path: string;
  rows: number;
  skipped: number;
  bytes: number;
  sha256: string;
  seconds: number;
  /** ISO date of the data: the file's own, else the manifest `date`, else the file's mtime (absent in older files). */
  date?: string;
  dateFrom?: 'file' | 'manifest' | 'mtime';
  /** Evidence kinds the source provides (absent in older files: capabilities then stand in). */
  kinds?: string[];
}
