/**
 * Turning the values of every layer at one interval into a deduplicated
 * record: the ASN row (ASN ranges, else the route origin), the flags an
 * announcing ASN lends, and the record id of the combined columns.
 */
import { Flag } from '../../src/index/record.ts';
import { NETWORK_TYPE_CODES, NETWORK_TYPE_SHIFT, RecordCol } from '../../src/index/format.ts';
import type { AllocationValue, Category } from '../sink.ts';
import { ASN_CATEGORY_FLAG, type AsnValue, type Collector, VALUE_LAYERS, type ValueLayer } from './collector.ts';
import { RowSet } from './row-set.ts';
import { claimBit, publisherGeoStands, resolveFlags, resolveProvider, type ResolvedProvider } from './precedence.ts';
import { ValueTable } from './value-table.ts';
import type { StringIds } from './string-pool.ts';

/** ASN row of the record's ASN sub-table. */
export interface AsnRow {
  asn: number;
  name?: string;
}

/** What the sweep needs back besides the record id. */
export interface Combined {
  recordId: number;
  flags: number;
  /** The ASN announcing the interval: route origin, else the ASN range. */
  announcing: number | undefined;
  hasRoute: boolean;
  hasAsnRange: boolean;
}

/**
 * Rows while building: the file's columns up to FLAGS, then the geo value id
 * in column RecordCol.GEO. The writer expands that id into the inline
 * geolocation columns (encodeRecords), so deduplication keys stay short.
 */
export const BUILD_RECORD_WIDTH = RecordCol.GEO + 1;

const LAYER = Object.fromEntries(VALUE_LAYERS.map((l, i) => [l, i])) as Record<ValueLayer, number>;

/** Registry statuses that mean the block is in use by a network. */
const IN_USE = new Set(['allocated', 'assigned']);

/**
 * Whether a registry allocation outranks a bogon claim: the registry (not
 * IANA's registry-level table) says the block is allocated or assigned, in a
 * file newer than the bogon list. Fresher data from the publisher of
 * allocations beats a stale third-party list of unallocated space.
 */
export function yieldsBogon(allocation: AllocationValue | undefined, bogonsAsOf: string): boolean {
  return allocation !== undefined && allocation.registry !== 'iana' && IN_USE.has(allocation.status) && allocation.asOf !== undefined && allocation.asOf > bogonsAsOf;
}

/** Builds and deduplicates record rows. */
export class RecordTable {
  /** Set by combine when the last combined interval's bogon claim yielded (read and reset by the sweep). */
  bogonsYielded = false;
  private readonly set = new RowSet(BUILD_RECORD_WIDTH);
  readonly asnRows = new ValueTable<AsnRow>();
  /** Resolved provider rows (the file's TPRV), interned by content. */
  readonly providers = new ValueTable<ResolvedProvider>();
  /** Resolved provider id per (infrastructure, service, crawler) claim ids (providerId's key). */
  private readonly providerIds = new Map<number | string, number>();
  private readonly asnFlagCache = new Map<number, number>();
  private readonly networkTypeCodes = new Map<number, number>();
  private readonly crawlerStringIds: number[];
  private readonly cols = new Array<number>(BUILD_RECORD_WIDTH).fill(0);
  private readonly combined: Combined = { recordId: 0, flags: 0, announcing: undefined, hasRoute: false, hasAsnRange: false };
  private readonly asnRowByValue = new Map<number, number>();
  private readonly asnRowByOrigin = new Map<number, number>();

  constructor(
    private readonly collector: Collector,
    strings: StringIds,
  ) {
    // Record 0: no data at all.
    this.recordId(this.cols);
    this.crawlerStringIds = collector.crawlerValues.values.map((k) => strings.id(k));
  }

  /** Number of distinct records. */
  get count(): number {
    return this.set.size;
  }

  /** Flat record rows, BUILD_RECORD_WIDTH u32 each, in id order. */
  get rows(): Uint32Array {
    return this.set.rows.view();
  }

  /**
   * Combines layer values (indexed like VALUE_LAYERS) and flag-layer flags
   * into a record. `bogonsAsOf` is the date of the family's bogon list.
   */
  combine(values: readonly number[], layerFlags: number, bogonsAsOf?: string): Combined {
    const c = this.collector;
    if (layerFlags & Flag.BOGON && bogonsAsOf !== undefined && yieldsBogon(c.allocationValues.get(values[LAYER.allocation]), bogonsAsOf)) {
      layerFlags &= ~Flag.BOGON;
      this.bogonsYielded = true;
    }
    const asnVal = c.asnValues.get(values[LAYER.asn]);
    const routeId = values[LAYER.route];
    const routeOrigin = c.routes.firstOrigin(routeId);
    let asnRowId = 0;
    let asn: number | undefined;
    if (asnVal) {
      asn = asnVal.asn;
      asnRowId = this.asnRowOfRange(values[LAYER.asn], asnVal);
    } else if (routeOrigin !== undefined) {
      asn = routeOrigin;
      asnRowId = this.asnRowOfOrigin(routeOrigin);
    }
    const announcing = routeOrigin ?? asn;
    let claims = layerFlags;
    let networkTypeCode = 0;
    if (announcing !== undefined) {
      claims |= this.asnFlags(announcing);
      networkTypeCode = this.networkTypeCode(announcing);
    }
    const flags = resolveFlags(claims);

    const cols = this.cols;
    // The publisher speaks first: its own location of the range, unless the database's lies inside it.
    const publisherGeo = values[LAYER.publisherGeo];
    cols[RecordCol.GEO] = publisherGeo && publisherGeoStands(c.geoValues.get(publisherGeo)!, c.geoValues.get(values[LAYER.geo])) ? publisherGeo : values[LAYER.geo];
    cols[RecordCol.ASN] = asnRowId;
    cols[RecordCol.ALLOCATION] = values[LAYER.allocation];
    cols[RecordCol.ROUTE] = values[LAYER.route];
    cols[RecordCol.PROVIDER] = this.providerId(values[LAYER.infrastructure], values[LAYER.provider], values[LAYER.crawler]);
    cols[RecordCol.CRAWLER] = this.crawlerStringIds[values[LAYER.crawler]] ?? 0;
    cols[RecordCol.THREAT_LIST] = values[LAYER.threatList];
    cols[RecordCol.THREAT_FEED] = values[LAYER.threatFeed];
    cols[RecordCol.SPECIAL_USE] = values[LAYER.specialUse];
    cols[RecordCol.FLAGS] = (flags | (networkTypeCode << NETWORK_TYPE_SHIFT)) >>> 0;
    // One result object reused for every interval: the sweep reads it before the next call.
    const out = this.combined;
    out.recordId = this.recordId(cols);
    out.flags = flags;
    out.announcing = announcing;
    out.hasRoute = routeId !== 0;
    out.hasAsnRange = asnVal !== undefined;
    return out;
  }

  /** The ASN row of an ASN-range value (by value id: the sweep asks once per interval). */
  private asnRowOfRange(valueId: number, v: AsnValue): number {
    let id = this.asnRowByValue.get(valueId);
    if (id === undefined) {
      id = this.asnRows.intern({ asn: v.asn, name: v.org ?? this.collector.asnNames.get(v.asn) }, `${v.asn}|${v.org ?? ''}`);
      this.asnRowByValue.set(valueId, id);
    }
    return id;
  }

  /** The ASN row of a route origin with no ASN range. */
  private asnRowOfOrigin(asn: number): number {
    let id = this.asnRowByOrigin.get(asn);
    if (id === undefined) {
      id = this.asnRows.intern({ asn, name: this.collector.asnNames.get(asn) }, `${asn}|`);
      this.asnRowByOrigin.set(asn, id);
    }
    return id;
  }

  private recordId(cols: readonly number[]): number {
    return this.set.idOf(cols);
  }

  /** The FLAGS column code of the network type an ASN declares (0: none). */
  private networkTypeCode(asn: number): number {
    let code = this.networkTypeCodes.get(asn);
    if (code === undefined) {
      const type = this.collector.asnNetworkTypes.get(asn);
      code = type === undefined ? 0 : NETWORK_TYPE_CODES.indexOf(type);
      this.networkTypeCodes.set(asn, code);
    }
    return code;
  }

  /** The resolved provider row of an interval's claims (0: no operator claim). */
  private providerId(infrastructure: number, service: number, crawler: number): number {
    if (infrastructure === 0 && service === 0 && crawler === 0) return 0;
    // A number key where the ids fit 53 bits (always, in practice): no string per interval.
    const key =
      infrastructure < 2 ** 21 && service < 2 ** 21 && crawler < 2 ** 11
        ? (infrastructure * 2 ** 21 + service) * 2 ** 11 + crawler
        : `${infrastructure}|${service}|${crawler}`;
    let id = this.providerIds.get(key);
    if (id === undefined) {
      const c = this.collector;
      const v = resolveProvider(c.providerValues.get(infrastructure), c.providerValues.get(service), c.crawlerValues.get(crawler));
      id = v ? this.providers.intern(v, JSON.stringify([v.name, v.category, v.service, v.region])) : 0;
      this.providerIds.set(key, id);
    }
    return id;
  }

  /** Flags an ASN lends to every address it announces (asn-list categories, ASN-DROP). */
  private asnFlags(asn: number): number {
    let flags = this.asnFlagCache.get(asn);
    if (flags === undefined) {
      flags = 0;
      const cats = this.collector.asnCategories.get(asn);
      // An ASN list is an aggregated third-party claim (precedence.ts).
      if (cats) for (const cat of cats) flags |= claimBit(ASN_CATEGORY_FLAG[cat as Category] ?? 0, 'aggregated');
      if (this.collector.asnDrops.has(asn)) flags |= Flag.ASN_DROP;
      this.asnFlagCache.set(asn, flags);
    }
    return flags;
  }
}
