/**
 * The kinds of evidence an index can hold, and which kinds a manifest source
 * provides (by its type and `category`). The builder records them per source
 * in META; scoring and /v1/data/status read them (src/scoring/coverage.ts).
 */

/** Every evidence kind, in the order /v1/data/status lists them. */
export const EVIDENCE_KINDS = [
  'geolocation',
  'asn',
  'allocation',
  'routing',
  'rpki',
  'bogons',
  'tor',
  'vpn',
  'proxy',
  'relays',
  'crawlers',
  'datacenter',
  'threat',
  'network_type',
] as const;
export type EvidenceKind = (typeof EVIDENCE_KINDS)[number];

/** The kind a range or ASN list `category` is evidence of. */
const KIND_OF_CATEGORY: Readonly<Record<string, EvidenceKind>> = {
  datacenter: 'datacenter',
  content: 'datacenter',
  network_service_provider: 'datacenter',
  webhook: 'datacenter',
  messaging: 'datacenter',
  vpn: 'vpn',
  proxy: 'proxy',
  privacy_relay: 'relays',
  mobile: 'network_type',
  threat: 'threat',
};

/**
 * Kinds every source of a type provides, whatever its options. A geofeed
 * (RFC 8805) locates only its publisher's own ranges, so it is no
 * geolocation coverage: that takes a location database (geo-mmdb, geo-csv).
 */
const KINDS_OF_TYPE: Readonly<Record<string, readonly EvidenceKind[]>> = {
  'geo-mmdb': ['geolocation'],
  'geo-csv': ['geolocation'],
  geofeed: [],
  'asn-csv': ['asn'],
  'asn-info': ['asn'],
  'rir-delegated': ['allocation'],
  pfx2as: ['routing', 'asn'],
  'ris-whois': ['routing', 'asn'],
  'rpki-vrps': ['rpki'],
  'crawler-ranges': ['crawlers'],
  'cloud-aws': ['datacenter'],
  'cloud-gcp': ['datacenter'],
  'cloud-azure': ['datacenter'],
  'cloud-oracle': ['datacenter'],
  'tor-exits': ['tor'],
  'icloud-relay': ['relays'],
  'spamhaus-drop': ['threat'],
  'spamhaus-asndrop': ['threat'],
  'threat-feed': ['threat'],
  bogons: ['bogons'],
  'peeringdb-net': ['network_type'],
  // The operator's word on their own ranges: it speaks for the ranges it names, not for a kind.
  overrides: [],
};

/** Types whose `category` option names what their ranges are evidence of. */
const CATEGORY_TYPES: ReadonlySet<string> = new Set(['cidr-list', 'provider-ranges', 'asn-list', 'geofeed']);

/** The evidence kinds a manifest source provides: from its type, plus its category where the type has one. */
export function kindsOfSource(type: string, category: unknown): EvidenceKind[] {
  const kinds = new Set<EvidenceKind>(KINDS_OF_TYPE[type] ?? []);
  if (CATEGORY_TYPES.has(type) && typeof category === 'string' && Object.hasOwn(KIND_OF_CATEGORY, category)) kinds.add(KIND_OF_CATEGORY[category]);
  return EVIDENCE_KINDS.filter((k) => kinds.has(k));
}
