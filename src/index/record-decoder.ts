/**
 * Decoding record rows and their sub-table rows into IndexRecord objects.
 * Each table has its own decoder reading u32 cells directly (no generic
 * row objects), and its own bounded direct-mapped cache: the lookup path
 * decodes a row once while it stays hot.
 */
import {
  FLAG_BITS_MASK,
  GEO_PRESENT,
  NETWORK_TYPE_CODES,
  NETWORK_TYPE_MASK,
  NETWORK_TYPE_SHIFT,
  RECORD_WIDTH,
  RecordCol,
  RouteFlag,
  RPKI_CODES,
  Section,
  TableLayout,
} from './format.ts';
import { u32Section, type MappedIndex } from './map-index-file.ts';
import type {
  AllocationInfo,
  AsnInfo,
  GeoInfo,
  IndexRecord,
  NetworkType,
  ProviderInfo,
  RouteInfo,
  RpkiStatus,
  SpecialUseInfo,
  ThreatFeedInfo,
  ThreatListInfo,
} from './record.ts';
import { DirectMappedCache, type StringReader } from './tables.ts';

/** One sub-table: its cells, row width, and a cache of decoded rows. */
class SubTable<T> {
  readonly u32: Uint32Array;
  readonly f32: Float32Array;
  readonly width: number;
  private readonly cache: DirectMappedCache<T>;
  // Bound once: a closure per call would allocate on every lookup.
  private readonly decodeId: (id: number) => T;

  constructor(
    file: MappedIndex,
    tag: keyof typeof TableLayout,
    decodeRow: (t: SubTable<T>, base: number) => T,
    cacheBits = 14,
  ) {
    this.u32 = u32Section(file, tag);
    this.f32 = new Float32Array(this.u32.buffer, this.u32.byteOffset, this.u32.length);
    this.width = TableLayout[tag].length;
    this.cache = new DirectMappedCache<T>(cacheBits);
    this.decodeId = (id) => decodeRow(this, id * this.width);
  }

  /** The decoded row `id`, or null for 0 ("none"). */
  get(id: number): T | null {
    if (id === 0) return null;
    return this.cache.get(id, this.decodeId);
  }
}

/** f32 cell as a number rounded to 4 decimals (about 10 m, the feeds' precision), null for NaN. */
function coord(v: number): number | null {
  return Number.isNaN(v) ? null : Math.round(v * 1e4) / 1e4;
}

/** Decodes records of a mapped index. */
export class RecordDecoder {
  private readonly records: Uint32Array;
  private readonly recordsF32: Float32Array;
  private readonly asn: SubTable<AsnInfo>;
  private readonly allocation: SubTable<AllocationInfo>;
  private readonly route: SubTable<RouteInfo>;
  private readonly provider: SubTable<ProviderInfo>;
  private readonly specialUse: SubTable<SpecialUseInfo>;
  private readonly threatList: SubTable<ThreatListInfo>;
  private readonly threatFeed: SubTable<ThreatFeedInfo>;

  constructor(file: MappedIndex, private readonly s: StringReader) {
    this.records = u32Section(file, Section.RECORDS);
    this.recordsF32 = new Float32Array(this.records.buffer, this.records.byteOffset, this.records.length);
    const str = (t: { u32: Uint32Array }, i: number) => s.get(t.u32[i]);
    this.asn = new SubTable(file, Section.ASN, (t, b) => ({ asn: t.u32[b], name: str(t, b + 1) }));
    this.allocation = new SubTable(file, Section.ALLOCATION, (t, b) => ({
      cidr: str(t, b),
      range: str(t, b + 1) ?? '',
      registry: str(t, b + 2) ?? '',
      countryCode: str(t, b + 3),
      status: str(t, b + 4) ?? '',
      date: str(t, b + 5),
    }));
    this.route = new SubTable(file, Section.ROUTE, (t, b) => {
      const origins = (str(t, b + 1) ?? '').split(',').filter(Boolean).map(Number);
      const flags = t.u32[b + 3];
      return {
        prefix: str(t, b) ?? '',
        originAsn: flags & RouteFlag.AS_SET || origins.length === 0 ? null : origins[0],
        origins,
        rpkiStatus: (RPKI_CODES[t.u32[b + 2]] ?? 'unknown') as RpkiStatus,
        originConflict: (flags & RouteFlag.ORIGIN_CONFLICT) !== 0,
      };
    });
    this.provider = new SubTable(file, Section.PROVIDER, (t, b) => ({
      name: str(t, b),
      category: str(t, b + 1) ?? '',
      service: str(t, b + 2),
      region: str(t, b + 3),
    }));
    this.specialUse = new SubTable(file, Section.SPECIAL_USE, (t, b) => ({
      name: str(t, b) ?? '',
      cidr: str(t, b + 1) ?? '',
      rfc: str(t, b + 2) ?? '',
      kind: str(t, b + 3) ?? '',
      globallyReachable: t.u32[b + 4] === 1,
    }));
    this.threatList = new SubTable(file, Section.THREAT_LIST, (t, b) => ({ list: str(t, b) ?? '', reference: str(t, b + 1) }));
    this.threatFeed = new SubTable(file, Section.THREAT_FEED, (t, b) => ({
      malware: str(t, b),
      firstSeen: str(t, b + 1),
      lastSeen: str(t, b + 2),
      port: t.u32[b + 3] || null,
      status: str(t, b + 4),
    }));
  }

  /** Number of records in the file. */
  get count(): number {
    return this.records.length / RECORD_WIDTH;
  }

  /**
   * A view of record `id`, its parts decoded when read. Not cached: on random
   * traffic a cache of decoded records missed nearly always, and each miss
   * stored a new object into an old-generation slot that the collector then
   * traced (BENCHMARKS.md, index lookup); a short-lived view costs less.
   */
  record(id: number): IndexRecord {
    return new LazyRecord(this, id * RECORD_WIDTH);
  }

  /** Sub-table rows of a record row, decoded on demand by LazyRecord. */
  cell(base: number, col: number): number {
    return this.records[base + col];
  }
  /** The inline geolocation of a record row (no sub-table read: it is in the row's cache line). */
  geoOf(base: number): GeoInfo | null {
    const r = this.records;
    const b = base + RecordCol.GEO;
    const cc = r[b];
    if (cc < GEO_PRESENT) return null;
    const s = this.s;
    return {
      countryCode: s.get(cc - GEO_PRESENT),
      region: s.get(r[b + 1]),
      city: s.get(r[b + 2]),
      postalCode: s.get(r[b + 3]),
      latitude: coord(this.recordsF32[b + 4]),
      longitude: coord(this.recordsF32[b + 5]),
      timezone: s.get(r[b + 6]),
    };
  }
  asnOf(base: number) {
    return this.asn.get(this.records[base + RecordCol.ASN]);
  }
  allocationOf(base: number) {
    return this.allocation.get(this.records[base + RecordCol.ALLOCATION]);
  }
  routeOf(base: number) {
    return this.route.get(this.records[base + RecordCol.ROUTE]);
  }
  providerOf(base: number) {
    return this.provider.get(this.records[base + RecordCol.PROVIDER]);
  }
  crawlerOf(base: number) {
    return this.s.get(this.records[base + RecordCol.CRAWLER]);
  }
  specialUseOf(base: number) {
    return this.specialUse.get(this.records[base + RecordCol.SPECIAL_USE]);
  }
  threatListOf(base: number) {
    return this.threatList.get(this.records[base + RecordCol.THREAT_LIST]);
  }
  threatFeedOf(base: number) {
    return this.threatFeed.get(this.records[base + RecordCol.THREAT_FEED]);
  }
}

/**
 * A view of one record row: the flags are read at once (the row's cache line
 * is fetched for them, and every answer reads them), each part only when
 * read. Only the location is kept in the view: it is the one part built per
 * read, while sub-table rows come from their own bounded caches (the same
 * object again while hot). Five fields: a lookup allocates little.
 */
class LazyRecord implements IndexRecord {
  readonly flags: number;
  readonly networkType: NetworkType | null;
  private geoValue: GeoInfo | null | undefined = undefined;

  constructor(
    private readonly decoder: RecordDecoder,
    private readonly base: number,
  ) {
    const cell = decoder.cell(base, RecordCol.FLAGS);
    this.flags = cell & FLAG_BITS_MASK;
    this.networkType = NETWORK_TYPE_CODES[(cell >>> NETWORK_TYPE_SHIFT) & NETWORK_TYPE_MASK] ?? null;
  }

  get geo() {
    return this.geoValue === undefined ? (this.geoValue = this.decoder.geoOf(this.base)) : this.geoValue;
  }
  get asn() {
    return this.decoder.asnOf(this.base);
  }
  get allocation() {
    return this.decoder.allocationOf(this.base);
  }
  get route() {
    return this.decoder.routeOf(this.base);
  }
  get provider() {
    return this.decoder.providerOf(this.base);
  }
  get crawler() {
    return this.decoder.crawlerOf(this.base);
  }
  get specialUse() {
    return this.decoder.specialUseOf(this.base);
  }
  get threatList() {
    return this.decoder.threatListOf(this.base);
  }
  get threatFeed() {
    return this.decoder.threatFeedOf(this.base);
  }

  /** Plain data for JSON (getters are not own properties). */
  toJSON(): IndexRecord {
    return {
      flags: this.flags,
      geo: this.geo,
      asn: this.asn,
      allocation: this.allocation,
      route: this.route,
      provider: this.provider,
      crawler: this.crawler,
      specialUse: this.specialUse,
      threatList: this.threatList,
      threatFeed: this.threatFeed,
      networkType: this.networkType,
    };
  }
}
