/**
 * The merger's input side: a BuildSink that files every parser report into
 * its layer (per family) with deduplicated values, plus per-ASN facts.
 */
import type { Addr, Family } from '../../src/net/ip.ts';
import { Flag, type NetworkType } from '../../src/index/record.ts';
import type {
  AllocationValue,
  AsnDropValue,
  BuildSink,
  Category,
  GeoValue,
  ManifestSource,
  ProviderValue,
  RouteValue,
  ThreatFeedValue,
  ThreatListValue,
  VrpValue,
} from '../sink.ts';
import { claimBit, dayOf, spanOf, standingOf, standingOfValue, type ProviderClaim, type Standing } from './precedence.ts';
import { GeoTable } from './geo-table.ts';
import { GrowableU32 } from './growable.ts';
import { RangeRows } from './range-rows.ts';
import { RouteTable } from './routed-prefixes.ts';
import { ValueTable } from './value-table.ts';

/**
 * Value layers: within each, the most specific range wins. Named provider
 * claims are split by standing (precedence.ts): `infrastructure` holds the
 * address-space holders' claims, `provider` the services' claims. Locations
 * likewise: `publisherGeo` holds the holders' own (a cloud's region, a
 * network's geofeed), which outrank the third-party databases' in `geo`.
 */
export const VALUE_LAYERS = [
  'geo',
  'asn',
  'allocation',
  'route',
  'provider',
  'crawler',
  'threatList',
  'threatFeed',
  'specialUse',
  'infrastructure',
  'publisherGeo',
] as const;
export type ValueLayer = (typeof VALUE_LAYERS)[number];

/** Record flag set by a provider/cidr-list category. */
export const CATEGORY_FLAG: Record<Category, number> = {
  datacenter: Flag.DATACENTER,
  vpn: Flag.VPN,
  proxy: Flag.PROXY,
  privacy_relay: Flag.PRIVACY_RELAY,
  mobile: Flag.MOBILE,
  content: Flag.CONTENT,
  network_service_provider: Flag.NETWORK_SERVICE_PROVIDER,
  webhook: Flag.WEBHOOK,
  messaging: Flag.MESSAGING,
  threat: Flag.THREAT_LIST,
};

/** Record flag set on every range announced by an ASN of an asn-list category (weaker for datacenter/vpn). */
export const ASN_CATEGORY_FLAG: Record<Category, number> = {
  ...CATEGORY_FLAG,
  datacenter: Flag.DATACENTER_ASN,
  vpn: Flag.VPN_ASN,
  threat: 0, // an ASN on a threat list is ASN-level context, not a per-address hit
};

export interface AsnValue {
  asn: number;
  org?: string;
}

export interface SpecialUseValue {
  name: string;
  cidr: string;
  rfc: string;
  kind: string;
  global: boolean;
}

/** Rows that remember which source (index into Collector.sources) reported each row. */
export class SourcedRows extends RangeRows {
  /** Source index + 1 per row (0: none). */
  private readonly sources = new GrowableU32(1024);

  /** Adds a range with its value id and the reporting source's index (-1: none). */
  pushFrom(start: Addr, end: Addr, val: number, source: number): void {
    this.push(start, end, val);
    this.sources.push(source + 1);
  }

  /** The index of the source that reported row i (-1: none). */
  sourceOf(i: number): number {
    return this.sources.at(i) - 1;
  }
}

/** A source as precedence sees it: its standing and its date in days (0: undated). */
export interface SourceStanding {
  standing: Standing;
  day: number;
}

/** Per-family layers. */
export class FamilyLayers {
  /** Rows per value layer (replaced by empty rows once the sweep has consumed them). */
  values: Record<ValueLayer, RangeRows>;
  /** Union layers keyed by flag bit. */
  readonly flags = new Map<number, RangeRows>();
  /** ISO date of the newest bogon list of this family (undefined: none, or undated). */
  bogonsAsOf: string | undefined;

  constructor(readonly family: Family) {
    this.values = Object.fromEntries(VALUE_LAYERS.map((l) => [l, new RangeRows(family)])) as Record<
      ValueLayer,
      RangeRows
    >;
    this.values.provider = new SourcedRows(family);
    this.values.infrastructure = new SourcedRows(family);
    this.values.publisherGeo = new SourcedRows(family);
  }

  /** Adds a range to a flag's union layer. */
  flag(bit: number, start: Addr, end: Addr): void {
    let rows = this.flags.get(bit);
    if (!rows) this.flags.set(bit, (rows = new RangeRows(this.family)));
    rows.push(start, end, bit);
  }
}

/** Collects every parser report; the sweep turns it into intervals and records. */
export class Collector implements BuildSink {
  readonly v4 = new FamilyLayers(4);
  readonly v6 = new FamilyLayers(6);

  /** Locations as typed rows (geo-table.ts): a database holds hundreds of thousands. */
  geoValues = new GeoTable();
  readonly asnValues = new ValueTable<AsnValue>();
  readonly allocationValues = new ValueTable<AllocationValue>();
  /** Routes as typed rows (routed-prefixes.ts): they grow with the routing snapshots. */
  routes = new RouteTable();
  readonly providerValues = new ValueTable<ProviderClaim>();
  readonly crawlerValues = new ValueTable<string>();
  readonly threatListValues = new ValueTable<ThreatListValue>();
  readonly threatFeedValues = new ValueTable<ThreatFeedValue>();
  readonly specialUseValues = new ValueTable<SpecialUseValue>();

  /** ASN -> name from asn-info sources (first source wins). */
  readonly asnNames = new Map<number, string>();
  /** ASN -> categories from asn-list sources. */
  readonly asnCategories = new Map<number, Set<Category>>();
  readonly asnDrops = new Map<number, AsnDropValue>();
  /** ASN -> declared network type from peeringdb-net sources (first source wins). */
  readonly asnNetworkTypes = new Map<number, NetworkType>();
  readonly vrps: VrpValue[] = [];
  /** Every source begun, in manifest order; rows of provider layers point here. */
  readonly sources: SourceStanding[] = [];
  private current = -1;

  /** Starts filing reports under a manifest source (its standing; dateSource dates it after parsing). */
  beginSource(source: ManifestSource): void {
    this.current = this.sources.length;
    this.sources.push({ standing: standingOf(source), day: dayOf(source.date) });
    this.geoValues.forgetValues();
  }

  /**
   * Dates the current source for precedence once its parser has run: the
   * date its file states, else the manifest's (a file's mtime is only when it
   * was copied, so it leaves the source undated, which ranks as older).
   */
  dateSource(isoDate: string): void {
    if (this.current >= 0) this.sources[this.current].day = dayOf(isoDate.slice(0, 10));
  }

  /** The date rank of a source index (0 when undated or outside any source). */
  sourceDay(source: number): number {
    return source >= 0 ? this.sources[source].day : 0;
  }

  /**
   * Ends collection: the value tables' intern keys (a string per distinct
   * value, millions in a full build) are let go before the sweep allocates.
   */
  seal(): void {
    for (const t of this.valueTables()) t.seal();
    this.sharedStrings = undefined;
    this.routes.seal();
    this.geoValues.seal();
  }

  private valueTables(): ValueTable<unknown>[] {
    return [
      this.asnValues,
      this.allocationValues,
      this.providerValues,
      this.crawlerValues,
      this.threatListValues,
      this.threatFeedValues,
      this.specialUseValues,
    ] as ValueTable<unknown>[];
  }

  /** Lets every collected value go once the index is encoded (the caller's handle stays, empty). */
  release(): void {
    for (const t of this.valueTables()) t.values.length = 1;
    this.geoValues = new GeoTable();
    this.routes = new RouteTable();
    this.asnNames.clear();
    this.asnCategories.clear();
    this.asnDrops.clear();
    this.asnNetworkTypes.clear();
    this.vrps.length = 0;
  }

  private reports = 0;

  private layers(family: Family): FamilyLayers {
    // Parsing a large feed makes short-lived values (lines, fields, addresses) by the
    // million, which the collector frees late on a machine with much RAM: a young
    // collection every 64 Ki reports (2^16) keeps them from piling up.
    if ((++this.reports & 0xffff) === 0) Bun.gc(false);
    return family === 4 ? this.v4 : this.v6;
  }

  geo(family: Family, start: Addr, end: Addr, v: GeoValue): void {
    const id = this.geoValues.intern(v);
    const layers = this.layers(family);
    // The holder of the address space locates its own ranges; among holders the fresher source breaks ties.
    if (this.current >= 0 && this.sources[this.current].standing === 'infrastructure') (layers.values.publisherGeo as SourcedRows).pushFrom(start, end, id, this.current);
    else layers.values.geo.push(start, end, id);
  }

  /** IPv6 ranges of a geolocation database's MMDB walk, as words (never a holder's own location). */
  geo6Words(start: Uint32Array, end: Uint32Array, v: GeoValue): void {
    this.layers(6).values.geo.pushWords(start, end, this.geoValues.intern(v));
  }

  asn(family: Family, start: Addr, end: Addr, asn: number, org?: string): void {
    const id = this.asnValues.intern({ asn, org }, `${asn}|${org ?? ''}`);
    this.layers(family).values.asn.push(start, end, id);
  }

  asnName(asn: number, name: string): void {
    if (name && !this.asnNames.has(asn)) this.asnNames.set(asn, name);
  }

  allocation(family: Family, start: Addr, end: Addr, v: AllocationValue): void {
    const key = `${v.registry}|${v.countryCode ?? ''}|${v.status}|${v.date ?? ''}|${v.blockStart}|${v.blockEnd}|${v.asOf ?? ''}`;
    const id = this.allocationValues.intern(v, key);
    // A new value keeps one copy of each of its few distinct words (registry, country, status, dates),
    // not the copy every line of a delegation file made.
    if (this.allocationValues.get(id) === v) {
      v.registry = this.shared(v.registry);
      v.status = this.shared(v.status);
      if (v.countryCode !== undefined) v.countryCode = this.shared(v.countryCode);
      if (v.date !== undefined) v.date = this.shared(v.date);
      if (v.asOf !== undefined) v.asOf = this.shared(v.asOf);
    }
    this.layers(family).values.allocation.push(start, end, id);
  }

  private sharedStrings: Map<string, string> | undefined = new Map();

  /** One instance of an equal string (until seal). */
  private shared(s: string): string {
    const map = this.sharedStrings;
    if (!map) return s;
    const known = map.get(s);
    if (known !== undefined) return known;
    map.set(s, s);
    return s;
  }

  route(family: Family, start: Addr, end: Addr, v: RouteValue): void {
    this.layers(family).values.route.push(start, end, this.routes.intern(family, start, v.prefixLen, v.origins, !!v.asSet));
  }

  vrp(v: VrpValue): void {
    this.vrps.push(v);
  }

  provider(family: Family, start: Addr, end: Addr, v: ProviderValue): void {
    const layers = this.layers(family);
    const standing = this.current >= 0 ? this.sources[this.current].standing : standingOfValue(v);
    const bit = claimBit(CATEGORY_FLAG[v.category], standing);
    if (bit) layers.flag(bit, start, end);
    // Only named providers compete for network.operator; an anonymous list only sets its category.
    if (v.provider) {
      const span = spanOf(start, end);
      const key = `${v.category}|${v.provider}|${v.service ?? ''}|${v.region ?? ''}|${span}`;
      const rows = standing === 'infrastructure' ? layers.values.infrastructure : layers.values.provider;
      (rows as SourcedRows).pushFrom(start, end, this.providerValues.intern({ ...v, span }, key), this.current);
    }
  }

  /** Entries of `overrides` sources, JSON lines, in manifest order (a later source's entry wins for the same prefix). */
  readonly overrideLines: string[] = [];

  overrides(jsonLines: readonly string[]): void {
    for (const line of jsonLines) this.overrideLines.push(line);
  }

  asnCategory(asn: number, category: Category): void {
    let set = this.asnCategories.get(asn);
    if (!set) this.asnCategories.set(asn, (set = new Set()));
    set.add(category);
  }

  asnNetworkType(asn: number, type: NetworkType): void {
    if (!this.asnNetworkTypes.has(asn)) this.asnNetworkTypes.set(asn, type);
  }

  crawler(family: Family, start: Addr, end: Addr, key: string): void {
    const layers = this.layers(family);
    layers.flag(Flag.CRAWLER_RANGE, start, end);
    layers.values.crawler.push(start, end, this.crawlerValues.intern(key, key));
  }

  torExit(family: Family, start: Addr, end: Addr): void {
    this.layers(family).flag(Flag.TOR_EXIT, start, end);
  }

  threatList(family: Family, start: Addr, end: Addr, v: ThreatListValue): void {
    const layers = this.layers(family);
    // DROP-style lists (hijacked/criminal netblocks) are the strong signal; others are generic lists.
    layers.flag(/drop/i.test(v.list) ? Flag.DROP : Flag.THREAT_LIST, start, end);
    layers.values.threatList.push(start, end, this.threatListValues.intern(v, `${v.list}|${v.reference ?? ''}`));
  }

  asnDrop(v: AsnDropValue): void {
    this.asnDrops.set(v.asn, v);
  }

  threatFeed(family: Family, start: Addr, end: Addr, v: ThreatFeedValue): void {
    const layers = this.layers(family);
    layers.flag(Flag.THREAT_FEED, start, end);
    const key = `${v.malware ?? ''}|${v.firstSeen ?? ''}|${v.lastSeen ?? ''}|${v.port ?? ''}|${v.status ?? ''}`;
    layers.values.threatFeed.push(start, end, this.threatFeedValues.intern(v, key));
  }

  bogon(family: Family, start: Addr, end: Addr, asOf?: string): void {
    const layers = this.layers(family);
    layers.flag(Flag.BOGON, start, end);
    // The newest list of the family dates every bogon claim of it: a claim yields only to data newer than that.
    if (asOf !== undefined && !(layers.bogonsAsOf !== undefined && layers.bogonsAsOf >= asOf)) layers.bogonsAsOf = asOf;
  }

  /** Built-in special-purpose blocks (not a parser report). */
  specialUse(family: Family, start: Addr, end: Addr, v: SpecialUseValue): void {
    const layers = this.layers(family);
    layers.flag(Flag.SPECIAL_USE, start, end);
    layers.values.specialUse.push(start, end, this.specialUseValues.intern(v, v.cidr));
  }
}
