/**
 * The publisher speaks first: which source's claim about a range stands when
 * several sources describe it (docs/signals.md, "Precedence"). The collector
 * files every claim with its source's standing; the sweep resolves them here
 * once per record, so a record carries resolved facts and lookups pay nothing.
 */
import { crawlerFamily } from '../../src/crawlers/registry.ts';
import { Flag } from '../../src/index/record.ts';
import type { GeoValue, ManifestSource, ProviderValue } from '../sink.ts';

/**
 * How a source stands toward the ranges it lists:
 * - `infrastructure`: the holder of the address space (a cloud's own ranges, an RFC 8805 geofeed);
 * - `service`: a named publisher's own service on those addresses, possibly inside someone else's space;
 * - `aggregated`: a third-party list naming no publisher (cidr-list/asn-list without `provider`).
 */
export type Standing = 'infrastructure' | 'service' | 'aggregated';

const INFRASTRUCTURE_TYPES: ReadonlySet<string> = new Set(['cloud-aws', 'cloud-gcp', 'cloud-azure', 'cloud-oracle']);
/** Types whose parser names the publisher itself (no manifest `provider` needed). */
const SELF_NAMED_SERVICE_TYPES: ReadonlySet<string> = new Set(['icloud-relay']);

/** The standing of a manifest source's category and provider claims. */
export function standingOf(source: ManifestSource): Standing {
  if (INFRASTRUCTURE_TYPES.has(source.type)) return 'infrastructure';
  if (SELF_NAMED_SERVICE_TYPES.has(source.type)) return 'service';
  const named = typeof source.provider === 'string' && source.provider.trim() !== '';
  if (!named) return 'aggregated';
  // RFC 8805 geofeeds are published by the holder of the address space.
  if (source.type === 'geofeed' || (source.type === 'provider-ranges' && source.format === 'vultr-geofeed')) return 'infrastructure';
  return 'service';
}

/** The standing of a claim reported outside any manifest source (tests, built-ins): named is a service, unnamed aggregated. */
export function standingOfValue(value: ProviderValue): Standing {
  return value.provider ? 'service' : 'aggregated';
}

/** Days since the epoch of a `YYYY-MM-DD` date; 0 (older than any dated source) when absent or malformed. */
export function dayOf(date: unknown): number {
  if (typeof date !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(date)) return 0;
  const ms = Date.parse(`${date}T00:00:00Z`);
  return Number.isFinite(ms) && ms > 0 ? Math.floor(ms / 86_400_000) : 0;
}

/**
 * Build-only flag bits: a usage claim made by an aggregated list. They sit
 * above every record Flag bit and never reach the file (resolveFlags folds
 * or drops them).
 */
export const AggregatedClaim = { DATACENTER: 1 << 27, VPN: 1 << 28, PROXY: 1 << 29, PRIVACY_RELAY: 1 << 30 } as const;
const AGGREGATED_MASK = AggregatedClaim.DATACENTER | AggregatedClaim.VPN | AggregatedClaim.PROXY | AggregatedClaim.PRIVACY_RELAY;

/**
 * Content and network-service ranges as their operators publish them (Google's
 * goog.json, Cloudflare's, Fastly's, CloudFront's lists). Every such list in
 * the catalog names its provider; an aggregated list of these categories, if
 * one were added, would count the same.
 */
const PUBLISHED_EDGE = Flag.CONTENT | Flag.NETWORK_SERVICE_PROVIDER;

/**
 * Which aggregated claims yield to which publisher declarations: the record
 * flag a claim becomes (an aggregated bit, or an ASN-level flag), and the
 * publisher uses (record flags from named lists and official crawler ranges)
 * that override it. A claim no listed use contradicts stands.
 */
const YIELDS: ReadonlyArray<readonly [claim: number, flag: number, overriddenBy: number]> = [
  [AggregatedClaim.VPN, Flag.VPN, Flag.PROXY | Flag.PRIVACY_RELAY | Flag.CRAWLER_RANGE],
  [AggregatedClaim.PROXY, Flag.PROXY, Flag.VPN | Flag.PRIVACY_RELAY | Flag.CRAWLER_RANGE],
  [AggregatedClaim.PRIVACY_RELAY, Flag.PRIVACY_RELAY, Flag.VPN | Flag.PROXY | Flag.CRAWLER_RANGE],
  [Flag.VPN_ASN, Flag.VPN_ASN, Flag.PROXY | Flag.PRIVACY_RELAY | Flag.CRAWLER_RANGE],
  // Relay egress carries many ordinary users' traffic: not a hosting address, whatever a hosting list says;
  // and a range its publisher declares as its content or network-service edge is that, not generic hosting.
  [AggregatedClaim.DATACENTER, Flag.DATACENTER, Flag.PRIVACY_RELAY | PUBLISHED_EDGE],
  [Flag.DATACENTER_ASN, Flag.DATACENTER_ASN, Flag.PRIVACY_RELAY | PUBLISHED_EDGE],
];

/** Record flags of categories an aggregated list's claim is filed under a build-only bit. */
const AGGREGATED_BIT: ReadonlyMap<number, number> = new Map([
  [Flag.DATACENTER, AggregatedClaim.DATACENTER],
  [Flag.VPN, AggregatedClaim.VPN],
  [Flag.PROXY, AggregatedClaim.PROXY],
  [Flag.PRIVACY_RELAY, AggregatedClaim.PRIVACY_RELAY],
]);

/** The flag bit a category claim sets, by the standing of its source (`bit` is the category's record flag). */
export function claimBit(bit: number, standing: Standing): number {
  return standing === 'aggregated' ? (AGGREGATED_BIT.get(bit) ?? bit) : bit;
}

/**
 * Record flags from claim flags: an aggregated list's claim yields where a
 * publisher declares its own range as a use that excludes it (Apple's relay
 * egress in a combined VPN list stays relay egress, and is no hosting
 * address); otherwise it stands.
 */
export function resolveFlags(claims: number): number {
  let flags = claims & ~AGGREGATED_MASK;
  for (const [claim, flag, overriddenBy] of YIELDS) {
    if ((claims & claim) === 0) continue;
    if ((claims & overriddenBy) === 0) flags |= flag;
    else if (claim === flag) flags &= ~flag; // an ASN-level flag is its own claim
  }
  return flags;
}

/** A named provider claim as the collector files it: the value and how wide its range is. */
export interface ProviderClaim extends ProviderValue {
  /** log2 of the claimed range's size, rounded down (smaller: more specific). */
  span: number;
}

/** The span of a range [start, end] (log2 of its size, rounded down). */
export function spanOf(start: number | bigint, end: number | bigint): number {
  if (typeof start === 'number') return Math.floor(Math.log2((end as number) - start + 1));
  return ((end as bigint) - start + 1n).toString(2).length - 1;
}

/** What a record's provider row holds: the operator and the service label, resolved from every claim. */
export interface ResolvedProvider {
  /** network.operator */
  name: string;
  /** The category the operator's claim declares (`crawler` for a crawler owner with no other claim). */
  category: string;
  service?: string;
  region?: string;
}

const ANONYMITY_CATEGORIES: ReadonlySet<string> = new Set(['vpn', 'proxy', 'privacy_relay']);

/**
 * The operator of an interval, from the most specific infrastructure claim,
 * the most specific service claim and the crawler range covering it, in the
 * order classify.ts ranks the uses they imply:
 * 1. a publisher's own VPN, proxy or relay service runs those addresses;
 * 2. a crawler range's owner (crawler registry) runs the crawler, whatever cloud it runs in;
 * 3. the holder of the address space (a cloud) outranks a tenant's list; the
 *    tenant shows as the service where its range is the more specific or the
 *    holder names no service;
 * 4. else the service's publisher.
 */
export function resolveProvider(
  infrastructure: ProviderClaim | undefined,
  service: ProviderClaim | undefined,
  crawlerKey: string | undefined,
): ResolvedProvider | undefined {
  if (service?.provider && ANONYMITY_CATEGORIES.has(service.category)) {
    return withOptional({ name: service.provider, category: service.category }, service.service, service.region);
  }
  const base = infrastructure ?? service;
  const owner = crawlerKey === undefined ? undefined : crawlerFamily(crawlerKey)?.provider;
  if (owner !== undefined) return withOptional({ name: owner, category: base?.category ?? 'crawler' }, crawlerKey, base?.region);
  if (!base?.provider) return undefined;
  const tenant = base === infrastructure && service?.provider && service.provider !== base.provider ? service : undefined;
  const tenantLabel = tenant ? [tenant.provider, tenant.service].filter(Boolean).join(' ') : undefined;
  const label = tenant && tenant.span < base.span ? tenantLabel : (base.service ?? tenantLabel);
  return withOptional({ name: base.provider, category: base.category }, label, base.region ?? tenant?.region);
}

/** Sets the optional fields that have a value. */
function withOptional(v: ResolvedProvider, service: string | undefined, region: string | undefined): ResolvedProvider {
  if (service) v.service = service;
  if (region) v.region = region;
  return v;
}

/** Entries the memo of compared names holds at most: it lives as long as the module, across builds. */
const COMPARABLE_MEMO_MAX = 1 << 16;
const comparableNames = new Map<string, string>();

/** A place name as compared: no diacritics, lower case ("Tôkyô" and "Tokyo" agree). */
function comparable(name: string): string {
  let key = comparableNames.get(name);
  if (key === undefined) {
    // Names come from feeds: the memo starts over rather than grow with them.
    if (comparableNames.size >= COMPARABLE_MEMO_MAX) comparableNames.clear();
    comparableNames.set(name, (key = name.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()));
  }
  return key;
}

/**
 * Whether the holder's location of a range stands over the geolocation
 * database's. It does wherever they disagree; where the holder names only a
 * country (or a country and subdivision, as a cloud region often does) and
 * the database places the address inside it, the database's finer answer
 * stays: the publisher is not contradicted, and its city is not invented.
 */
export function publisherGeoStands(publisher: GeoValue, database: GeoValue | undefined): boolean {
  if (publisher.city !== undefined || database === undefined) return true;
  if (database.countryCode !== publisher.countryCode) return true;
  if (publisher.region === undefined) return false;
  return database.region === undefined || comparable(database.region) !== comparable(publisher.region);
}
