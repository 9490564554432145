/**
 * Classification (spec 2.1 `classification`) and the classified part of
 * `network` (category, operator, operator_type, service_name), read from the
 * index layers only: no user agent, no caller data.
 */
import { Flag, type IndexRecord, type NetworkType } from '../index/record.ts';
import { FULL_COVERAGE, holds, isStale, type Coverage, type EvidenceKind } from './coverage.ts';
import type {
  Classification,
  Level,
  NetworkCategory,
  NetworkContext,
  OperatorType,
  ProxyType,
  ScoringContext,
  ThreatLevel,
  Trait,
  UsageType,
} from './types.ts';

const THREAT_FLAGS = Flag.DROP | Flag.THREAT_LIST | Flag.THREAT_FEED;

/** Non-routable: a full bogon, or a special-purpose block not reachable globally. */
export function isNonRoutable(record: IndexRecord): boolean {
  if (record.flags & Flag.BOGON) return true;
  if (record.specialUse) return !record.specialUse.globallyReachable;
  return (record.flags & Flag.SPECIAL_USE) !== 0;
}

/**
 * Usage of a network type its operator declares (PeeringDB). ASN-level and
 * self-declared, so never 'high'; a transit network (NSP) often also serves
 * subscribers, so 'low'.
 */
export const NETWORK_TYPE_USAGE: Readonly<Record<NetworkType, { usage: UsageType; confidence: Level }>> = {
  cable_dsl_isp: { usage: 'isp', confidence: 'medium' },
  nsp: { usage: 'network_service', confidence: 'low' },
  content: { usage: 'content_delivery', confidence: 'medium' },
  enterprise: { usage: 'business', confidence: 'medium' },
  educational_research: { usage: 'education', confidence: 'medium' },
  government: { usage: 'government', confidence: 'medium' },
  non_profit: { usage: 'non_profit', confidence: 'medium' },
  route_server: { usage: 'network_service', confidence: 'medium' },
  network_services: { usage: 'network_service', confidence: 'medium' },
  route_collector: { usage: 'network_service', confidence: 'medium' },
};

const NO_USAGE = Object.freeze({ usage: 'unknown' as UsageType, confidence: 'low' as Level });

/**
 * The primary usage and how sure the layers make us of it. Conflicting
 * claims were settled when the index was built (the publisher speaks first,
 * index-builder/merge/precedence.ts): this order ranks uses that stand together.
 */
function primaryUsage(record: IndexRecord, ctx: ScoringContext): { usage: UsageType; confidence: Level } {
  const f = record.flags;
  // The operator's word on their own range outranks every feed.
  const named = record.override?.usageType;
  if (named) return { usage: named as UsageType, confidence: 'high' };
  if (isNonRoutable(record)) return { usage: 'reserved', confidence: 'high' };
  if (f & Flag.TOR_EXIT) return { usage: 'tor', confidence: 'high' };
  if (f & Flag.VPN) return { usage: 'vpn', confidence: 'high' };
  if (f & Flag.PROXY) return { usage: 'proxy', confidence: 'medium' };
  if (f & Flag.PRIVACY_RELAY) return { usage: 'privacy_relay', confidence: 'high' };
  if (ctx.verifiedCrawler || record.crawler !== null || f & Flag.CRAWLER_RANGE) return { usage: 'crawler', confidence: 'high' };
  // ASN-level lists cover every range the ASN announces, including ones it does not use for the listed service.
  if (f & Flag.VPN_ASN) return { usage: 'vpn', confidence: 'medium' };
  if (f & Flag.DATACENTER) return { usage: 'hosting', confidence: 'high' };
  if (f & Flag.CONTENT) return { usage: 'content_delivery', confidence: 'high' };
  if (f & Flag.NETWORK_SERVICE_PROVIDER) return { usage: 'network_service', confidence: 'high' };
  if (f & Flag.WEBHOOK) return { usage: 'webhook', confidence: 'high' };
  if (f & Flag.MESSAGING) return { usage: 'messaging', confidence: 'high' };
  if (f & Flag.MOBILE) return { usage: 'mobile', confidence: 'medium' };
  if (f & Flag.DATACENTER_ASN) return { usage: 'hosting', confidence: 'medium' };
  // Range lists (above) speak for the address; the operator's declared type only for its network.
  if (record.networkType !== null) return NETWORK_TYPE_USAGE[record.networkType];
  // Absence is not evidence: no list or declared type means usage 'unknown', never a guessed 'residential'.
  return NO_USAGE;
}

function proxyTypeOf(f: number): ProxyType | null {
  if (f & Flag.TOR_EXIT) return 'tor';
  if (f & (Flag.VPN | Flag.VPN_ASN)) return 'vpn';
  if (f & Flag.PROXY) return 'proxy';
  if (f & Flag.PRIVACY_RELAY) return 'privacy_relay';
  return null;
}

/**
 * High and Medium are read from facts the index holds; Low says the threat
 * lists were consulted and name nothing, so without threat data it is
 * `Unknown` (docs/scoring.md).
 */
function threatLevelOf(record: IndexRecord, nonRoutable: boolean, coverage: Coverage): ThreatLevel {
  const f = record.flags;
  if (f & THREAT_FLAGS) return 'High';
  if (f & (Flag.TOR_EXIT | Flag.PROXY | Flag.ASN_DROP) || nonRoutable || record.route?.rpkiStatus === 'invalid') return 'Medium';
  return holds(coverage, 'threat') ? 'Low' : 'Unknown';
}

/** The kind a usage type is read from (null: the built-in registries, or no usage found). */
const KIND_OF_USAGE: Readonly<Record<UsageType, EvidenceKind | null>> = {
  reserved: null,
  unknown: null,
  tor: 'tor',
  vpn: 'vpn',
  proxy: 'proxy',
  privacy_relay: 'relays',
  crawler: 'crawlers',
  hosting: 'datacenter',
  content_delivery: 'datacenter',
  network_service: 'datacenter',
  webhook: 'datacenter',
  messaging: 'datacenter',
  mobile: 'network_type',
  isp: 'network_type',
  business: 'network_type',
  education: 'network_type',
  government: 'network_type',
  non_profit: 'network_type',
};

/** Kinds that must all be held before "none of these" can support a usage found by elimination. */
const ELIMINATED_KINDS: readonly EvidenceKind[] = ['tor', 'vpn', 'proxy', 'relays', 'datacenter'];

const LOWER_LEVEL: Readonly<Record<Level, Level>> = { high: 'medium', medium: 'low', low: 'low' };

/**
 * The usage confidence the index's coverage allows: one level lower when the
 * usage's kind is stale; low when no usage is found while a kind that could
 * have named one is not loaded at all.
 */
function coveredConfidence(usage: UsageType, confidence: Level, coverage: Coverage): Level {
  if (coverage.held === FULL_COVERAGE.held && coverage.stale === 0) return confidence;
  const kind = KIND_OF_USAGE[usage];
  if (kind !== null) return isStale(coverage, kind) ? LOWER_LEVEL[confidence] : confidence;
  if (usage === 'reserved') return confidence;
  return ELIMINATED_KINDS.every((k) => holds(coverage, k)) ? confidence : 'low';
}

// Flag → trait, in the order traits are listed.
const FLAG_TRAITS: ReadonlyArray<readonly [number, Trait]> = [
  [Flag.TOR_EXIT | Flag.VPN | Flag.VPN_ASN | Flag.PROXY, 'anonymizing'],
  [Flag.PRIVACY_RELAY, 'shared_egress'],
  [Flag.DATACENTER, 'hosting'],
  [Flag.DATACENTER_ASN, 'hosting_asn'],
  [Flag.VPN_ASN, 'vpn_asn'],
  [Flag.CONTENT, 'content_delivery'],
  [Flag.NETWORK_SERVICE_PROVIDER, 'network_service'],
  [Flag.WEBHOOK, 'webhook'],
  [Flag.MESSAGING, 'messaging'],
  [Flag.MOBILE, 'mobile'],
  [Flag.CRAWLER_RANGE, 'crawler_range'],
  [THREAT_FLAGS, 'threat_listed'],
  [Flag.THREAT_FEED, 'botnet_c2'],
  [Flag.ASN_DROP, 'asn_drop_listed'],
];

function traitsOf(record: IndexRecord, ctx: ScoringContext, nonRoutable: boolean): Trait[] {
  const f = record.flags;
  const traits: Trait[] = [];
  for (const [mask, trait] of FLAG_TRAITS) {
    if (f & mask) traits.push(trait);
  }
  // The crawler key is the range fact even when the flag bit was not set.
  if (record.crawler !== null && !(f & Flag.CRAWLER_RANGE)) traits.push('crawler_range');
  if (ctx.verifiedCrawler) traits.push('verified_crawler');
  if (nonRoutable) traits.push('non_routable');
  if (record.route?.rpkiStatus === 'invalid') traits.push('rpki_invalid');
  if (record.route?.originConflict) traits.push('origin_conflict');
  return traits;
}

/** Spec 2.1 classification of a record, under the coverage of its index (ctx.coverage). */
export function classify(record: IndexRecord, ctx: ScoringContext): Classification {
  const f = record.flags;
  const nonRoutable = isNonRoutable(record);
  const coverage = ctx.coverage ?? FULL_COVERAGE;
  const primary = primaryUsage(record, ctx);
  const usage = primary.usage;
  // An override speaks for its range whatever the index holds.
  const confidence = record.override?.usageType || (record.override?.kinds.length ?? 0) > 0 ? primary.confidence : coveredConfidence(usage, primary.confidence, coverage);
  return {
    usage_type: usage,
    is_datacenter: (f & (Flag.DATACENTER | Flag.DATACENTER_ASN)) !== 0,
    is_vpn: (f & (Flag.VPN | Flag.VPN_ASN)) !== 0,
    is_proxy: (f & (Flag.PROXY | Flag.VPN | Flag.VPN_ASN | Flag.TOR_EXIT)) !== 0,
    is_tor: (f & Flag.TOR_EXIT) !== 0,
    is_privacy_relay: (f & Flag.PRIVACY_RELAY) !== 0,
    is_mobile: (f & Flag.MOBILE) !== 0,
    is_known_crawler: record.crawler !== null || (f & Flag.CRAWLER_RANGE) !== 0,
    is_verified_crawler: ctx.verifiedCrawler !== null,
    proxy_type: proxyTypeOf(f),
    confidence,
    traits: traitsOf(record, ctx, nonRoutable),
    threat_level: threatLevelOf(record, nonRoutable, coverage),
  };
}

const CATEGORY_OF_USAGE: Readonly<Record<UsageType, NetworkCategory | null>> = {
  reserved: 'reserved',
  unknown: null,
  tor: 'tor',
  vpn: 'vpn',
  proxy: 'proxy',
  privacy_relay: 'privacy_relay',
  crawler: 'crawler',
  hosting: 'hosting',
  content_delivery: 'content',
  network_service: 'network_service_provider',
  webhook: 'webhook',
  messaging: 'messaging',
  mobile: 'mobile',
  // An access ISP's network: the residential (and small-business) access the operator declares.
  isp: 'residential',
  business: 'business',
  education: 'education',
  government: 'government',
  non_profit: 'non_profit',
};

const OPERATOR_TYPE_OF_CATEGORY: Readonly<Record<NetworkCategory, OperatorType | null>> = {
  reserved: 'reserved',
  // A Tor exit is run by a volunteer on someone else's network: no operator type of its own.
  tor: null,
  vpn: 'vpn_provider',
  proxy: 'proxy_operator',
  privacy_relay: 'privacy_relay_operator',
  crawler: 'crawler_operator',
  hosting: 'hosting',
  content: 'content_delivery',
  network_service_provider: 'network_service_provider',
  webhook: 'saas',
  messaging: 'saas',
  mobile: 'mobile_isp',
  residential: 'isp',
  business: 'business',
  education: 'education',
  government: 'government',
  non_profit: 'non_profit',
};

/** The `network` fields category, operator, operator_type and service_name. */
export function networkContext(record: IndexRecord, classification: Classification): NetworkContext {
  const named = record.override?.category as NetworkCategory | null | undefined;
  const category = named ? named : CATEGORY_OF_USAGE[classification.usage_type];
  let operatorType = category ? OPERATOR_TYPE_OF_CATEGORY[category] : null;
  if (category === 'tor' && record.flags & (Flag.DATACENTER | Flag.DATACENTER_ASN)) operatorType = 'hosting';
  return {
    category,
    // Reserved space has no operator; otherwise the provider's published name beats the ASN's.
    operator: category === 'reserved' ? null : (record.provider?.name ?? record.asn?.name ?? null),
    operator_type: operatorType,
    // On a crawler range the crawler is the service; elsewhere the provider's product label.
    service_name: category === 'crawler' ? (record.crawler ?? record.provider?.service ?? null) : (record.provider?.service ?? null),
  };
}
