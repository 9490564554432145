/**
 * The value of each diff field group for a record of one index: read from
 * the record (location, ASN, allocation, route) or from what scoring says
 * of it (classification flags, threat level, band, verdict). Scoring runs
 * once per scoring view (a few hundred per index), and a small
 * direct-mapped cache keeps the facts of recently seen record ids, so a
 * sweep over millions of intervals holds a bounded amount of memory.
 */
import { DIFF_FIELDS, type DiffField } from '../../contract/diff.ts';
import type { IndexReader } from '../../index/reader.ts';
import { Flag, type IndexRecord } from '../../index/record.ts';
import { assess, coverageOf, DEFAULT_POLICY, scoringKey, type Coverage } from '../../scoring/index.ts';

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
  threat: string;
  band: string;
  verdict: string;
}

/** Facts of the records of one index (record id -> the value of every field group). */
export class RecordFacts {
  private readonly ids = new Int32Array(1 << CACHE_BITS).fill(-1);
  private readonly values: FactValue[][] = new Array(1 << CACHE_BITS);
  private readonly scored = new Map<number | string, Scored>();
  private readonly coverage: Coverage;
  /** The facts of no record (space the index does not cover). */
  static readonly NONE: readonly FactValue[] = Object.freeze(DIFF_FIELDS.map(() => null));

  /** Coverage is the index's own at its build time: each side is judged as it answered when fresh. */
  constructor(private readonly reader: IndexReader) {
    this.coverage = coverageOf(reader.meta, Date.parse(reader.meta.builtAt));
  }

  /** Every field group's value for record `id` (-1: none). */
  of(id: number): readonly FactValue[] {
    if (id < 0) return RecordFacts.NONE;
    const slot = id & ((1 << CACHE_BITS) - 1);
    if (this.ids[slot] === id) return this.values[slot];
    const v = this.compute(this.reader.record(id));
    this.ids[slot] = id;
    this.values[slot] = v;
    return v;
  }

  private compute(r: IndexRecord): FactValue[] {
    const s = this.scoredOf(r);
    const a = r.allocation;
    const route = r.route;
    const special = r.specialUse;
    const out: Record<DiffField, FactValue> = {
      country: r.geo?.countryCode ?? null,
      city: r.geo?.city ?? null,
      asn: r.asn?.asn ?? null,
      org: r.asn?.name ?? null,
      allocation: a ? `${a.registry} ${a.countryCode ?? '-'} ${a.status} ${a.cidr ?? a.range}` : null,
      routing_origin: route ? (route.originAsn === null ? `{${route.origins.join(',')}}` : `AS${route.originAsn}`) : null,
      is_datacenter: s.is_datacenter,
      is_vpn: s.is_vpn,
      is_proxy: s.is_proxy,
      is_tor: s.is_tor,
      is_privacy_relay: s.is_privacy_relay,
      is_mobile: s.is_mobile,
      is_known_crawler: s.is_known_crawler,
      is_bogon: (r.flags & Flag.BOGON) !== 0 || (special !== null && !special.globallyReachable),
      threat: s.threat,
      score_band: s.band,
      verdict: s.verdict,
    };
    return DIFF_FIELDS.map((f) => out[f]);
  }

  private scoredOf(r: IndexRecord): Scored {
    const key = scoringKey(r);
    let s = this.scored.get(key);
    if (s === undefined) {
      if (this.scored.size >= MAX_VIEWS) this.scored.clear();
      const a = assess(r, { scoring: { verifiedCrawler: null, coverage: this.coverage }, policy: DEFAULT_POLICY });
      const c = a.classification;
      s = {
        is_datacenter: c.is_datacenter,
        is_vpn: c.is_vpn,
        is_proxy: c.is_proxy,
        is_tor: c.is_tor,
        is_privacy_relay: c.is_privacy_relay,
        is_mobile: c.is_mobile,
        is_known_crawler: c.is_known_crawler,
        threat: c.threat_level,
        band: a.score.band,
        verdict: a.score.verdict,
      };
      this.scored.set(key, s);
    }
    return s;
  }
}
