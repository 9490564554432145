/**
 * The value of each diff field group for a record of one index, read from
 * the record row's cells (location, ASN, allocation, route: a few typed
 * array reads and cached strings, no record object), and, for the
 * classification flags, threat level, band and verdict, from what scoring
 * says of the record, computed once per distinct set of scoring facts (a
 * signature of the row's cells). A small direct-mapped cache keeps the facts
 * of recently seen record ids, so a sweep over millions of intervals holds a
 * bounded amount of memory.
 */
import { DIFF_FIELDS, type DiffField } from '../../contract/diff.ts';
import { GEO_PRESENT, RECORD_WIDTH, RecordCol, RouteFlag, Section, TableLayout } from '../../index/format.ts';
import { u32Section } from '../../index/map-index-file.ts';
import { DirectMappedCache } from '../../index/tables.ts';
import type { IndexReader } from '../../index/reader.ts';
import { Flag, type IndexRecord } from '../../index/record.ts';
import { assess, coverageOf, DEFAULT_POLICY, type Coverage } from '../../scoring/index.ts';

export type FactValue = string | number | boolean | null;

/** Field index of each group (facts arrays are in DIFF_FIELDS order). */
export const FIELD_INDEX: Readonly<Record<DiffField, number>> = Object.fromEntries(DIFF_FIELDS.map((f, i) => [f, i])) as Record<DiffField, number>;

const CACHE_BITS = 12;
/** Above this many scoring views the memo starts over (real indexes have a few hundred). */
const MAX_VIEWS = 50_000;

/** What scoring says, per scoring view. */
interface Scored {
  is_datacenter: boolean;
  is_vpn: boolean;
  is_proxy: boolean;
  is_tor: boolean;
  is_privacy_relay: boolean;
  is_mobile: boolean;
  is_known_crawler: boolean;
  is_bogon: boolean;
  threat: string;
  band: string;
  verdict: string;
}

/** Facts of the records of one index (record id -> the value of every field group). */
export class RecordFacts {
  private readonly ids = new Int32Array(1 << CACHE_BITS).fill(-1);
  // One array per slot, made once and overwritten: a sweep computes millions of records' facts.
  private readonly values: FactValue[][] = Array.from({ length: 1 << CACHE_BITS }, () => new Array<FactValue>(DIFF_FIELDS.length).fill(null));
  private readonly allocations = new DirectMappedCache<string>(16);
  private readonly allocationTextOf = (id: number) => {
    const a = this.allocation;
    const b = id * ALLOCATION_WIDTH;
    const str = this.reader.strings;
    return `${str.get(a[b + 2]) ?? ''} ${str.get(a[b + 3]) ?? '-'} ${str.get(a[b + 4]) ?? ''} ${str.get(a[b]) ?? str.get(a[b + 1]) ?? ''}`;
  };
  private readonly scored = new Map<number | string, Scored>();
  private readonly coverage: Coverage;
  private readonly rows: Uint32Array;
  private readonly asn: Uint32Array;
  private readonly allocation: Uint32Array;
  private readonly route: Uint32Array;
  /** The facts of no record (space the index does not cover). */
  static readonly NONE: readonly FactValue[] = Object.freeze(DIFF_FIELDS.map(() => null));

  /** Coverage is the index's own at its build time: each side is judged as it answered when fresh. */
  constructor(private readonly reader: IndexReader) {
    this.coverage = coverageOf(reader.meta, Date.parse(reader.meta.builtAt));
    this.rows = u32Section(reader.file, Section.RECORDS);
    this.asn = u32Section(reader.file, Section.ASN);
    this.allocation = u32Section(reader.file, Section.ALLOCATION);
    this.route = u32Section(reader.file, Section.ROUTE);
  }

  /**
   * Every field group's value for record `id` (-1: none). The array is the
   * cache slot's own: valid until the next call for an id of the same slot.
   */
  of(id: number): readonly FactValue[] {
    if (id < 0) return RecordFacts.NONE;
    const slot = id & ((1 << CACHE_BITS) - 1);
    const out = this.values[slot];
    if (this.ids[slot] !== id) {
      this.compute(id, out);
      this.ids[slot] = id;
    }
    return out;
  }

  private compute(id: number, out: FactValue[]): void {
    const r = this.rows;
    const base = id * RECORD_WIDTH;
    const str = this.reader.strings;
    const cc = r[base + RecordCol.GEO];
    const hasGeo = cc >= GEO_PRESENT;
    const asnRow = r[base + RecordCol.ASN] * ASN_WIDTH;
    const routeId = r[base + RecordCol.ROUTE];
    const routeRow = routeId * ROUTE_WIDTH;
    const routeFlags = routeId === 0 ? 0 : this.route[routeRow + 3];
    const origins = routeId === 0 ? null : (str.get(this.route[routeRow + 1]) ?? '');
    const s = this.scoredOf(id, base, routeId, routeRow, routeFlags, origins);
    out[F.country] = hasGeo ? str.get(cc - GEO_PRESENT) : null;
    out[F.city] = hasGeo ? str.get(r[base + RecordCol.GEO + 2]) : null;
    out[F.asn] = asnRow === 0 ? null : this.asn[asnRow];
    out[F.org] = asnRow === 0 ? null : str.get(this.asn[asnRow + 1]);
    out[F.allocation] = this.allocationText(r[base + RecordCol.ALLOCATION]);
    // The origin AS as a number (no string per record; shown as AS<n>), an AS-set or no origin as text.
    out[F.routing_origin] = origins === null ? null : routeFlags & RouteFlag.AS_SET || origins === '' ? `{${origins}}` : parseInt(origins, 10);
    out[F.is_datacenter] = s.is_datacenter;
    out[F.is_vpn] = s.is_vpn;
    out[F.is_proxy] = s.is_proxy;
    out[F.is_tor] = s.is_tor;
    out[F.is_privacy_relay] = s.is_privacy_relay;
    out[F.is_mobile] = s.is_mobile;
    out[F.is_known_crawler] = s.is_known_crawler;
    out[F.is_bogon] = s.is_bogon;
    out[F.threat] = s.threat;
    out[F.score_band] = s.band;
    out[F.verdict] = s.verdict;
  }

  /** `registry cc status block` of an allocation row (recent rows cached). */
  private allocationText(id: number): string | null {
    return id === 0 ? null : this.allocations.get(id, this.allocationTextOf);
  }

  /**
   * What scoring says of record `id`, memoised by a signature of the cells
   * scoring reads (scoring/view.ts lists them): the flags cell, which layers
   * are present, the route's RPKI state and flags, whether the ASN has a
   * name, and the provider, special-use and threat-feed rows (rare: by id).
   * Records with one signature have one scoring view, so one answer.
   */
  private scoredOf(id: number, base: number, routeId: number, routeRow: number, routeFlags: number, origins: string | null): Scored {
    const r = this.rows;
    const asnId = r[base + RecordCol.ASN];
    const asnName = asnId === 0 ? 0 : nameState(this.reader.strings.get(this.asn[asnId * ASN_WIDTH + 1]));
    const routeCode = routeId === 0 ? 0 : 1 + this.route[routeRow + 2] * 2 + (routeFlags & 3) * 8 + (origins === '' ? 32 : 0);
    const bits =
      (r[base + RecordCol.GEO] >= GEO_PRESENT ? 1 : 0) |
      (r[base + RecordCol.ALLOCATION] !== 0 ? 2 : 0) |
      (r[base + RecordCol.CRAWLER] !== 0 ? 4 : 0) |
      (r[base + RecordCol.THREAT_LIST] !== 0 ? 8 : 0) |
      (asnName << 4) |
      (routeCode << 6);
    // flags cell (32 bits) * 2^13 + 13 bits: exact in a double.
    const packed = r[base + RecordCol.FLAGS] * 8192 + bits;
    const rare = r[base + RecordCol.PROVIDER] | r[base + RecordCol.SPECIAL_USE] | r[base + RecordCol.THREAT_FEED];
    const key = rare === 0 ? packed : `${packed}|${r[base + RecordCol.PROVIDER]}|${r[base + RecordCol.SPECIAL_USE]}|${r[base + RecordCol.THREAT_FEED]}`;
    let s = this.scored.get(key);
    if (s === undefined) {
      if (this.scored.size >= MAX_VIEWS) this.scored.clear();
      s = this.score(this.reader.record(id));
      this.scored.set(key, s);
    }
    return s;
  }

  private score(r: IndexRecord): Scored {
    const a = assess(r, { scoring: { verifiedCrawler: null, coverage: this.coverage }, policy: DEFAULT_POLICY });
    const c = a.classification;
    const special = r.specialUse;
    return {
      is_datacenter: c.is_datacenter,
      is_vpn: c.is_vpn,
      is_proxy: c.is_proxy,
      is_tor: c.is_tor,
      is_privacy_relay: c.is_privacy_relay,
      is_mobile: c.is_mobile,
      is_known_crawler: c.is_known_crawler,
      is_bogon: (r.flags & Flag.BOGON) !== 0 || (special !== null && !special.globallyReachable),
      threat: c.threat_level,
      band: a.score.band,
      verdict: a.score.verdict,
    };
  }
}

/** A name as scoring tells it apart: none, empty, or a name. */
const nameState = (name: string | null) => (name === null ? 1 : name === '' ? 2 : 3);

const F = FIELD_INDEX;
const ASN_WIDTH = TableLayout[Section.ASN].length;
const ALLOCATION_WIDTH = TableLayout[Section.ALLOCATION].length;
const ROUTE_WIDTH = TableLayout[Section.ROUTE].length;
