/**
 * The sweep: every layer normalised to disjoint segments, then one pass over
 * all their boundaries yields elementary intervals, each pointing to a
 * deduplicated record that combines every layer covering it.
 */
import type { Family } from '../../src/net/ip.ts';
import { type Collector, type FamilyLayers, SourcedRows, VALUE_LAYERS } from './collector.ts';
import type { ResolvedProvider } from './precedence.ts';
import { DensityCounter, type AsnDensity } from './density.ts';
import { RecordTable, type AsnRow } from './records.ts';
import { normalizeMostSpecific, normalizeUnion, RangeRows, type Segments } from './range-rows.ts';
import { ValueTable } from './value-table.ts';
import { StringPool } from './string-pool.ts';
import { GrowableU32 } from './growable.ts';
import { addrAt, compareAt, copyAt, isLastAt, stepAt, widthOf } from './addr-words.ts';

/**
 * Elementary intervals of one family: interval i covers [start i, start i+1 - 1].
 * Starts are u32 words: one per IPv4 interval, four (most significant first) per IPv6 interval.
 */
export interface FamilyIntervals {
  family: Family;
  count: number;
  startWords: Uint32Array;
  recs: Uint32Array;
}

export type { AsnRow } from './records.ts';
export type { AsnDensity } from './density.ts';

/** The merged index, ready for the writer. */
export interface MergedIndex {
  v4: FamilyIntervals;
  v6: FamilyIntervals;
  /** Flat record rows, BUILD_RECORD_WIDTH u32 each (geo as a value id); record 0 is the empty record. */
  records: Uint32Array;
  recordCount: number;
  asnRows: ValueTable<AsnRow>;
  /** Provider rows as records point to them: operator and service resolved by precedence.ts. */
  providers: ValueTable<ResolvedProvider>;
  strings: StringPool;
  density: Map<number, AsnDensity>;
  /** Address families with route data (a missing route is evidence only in these). */
  routedFamilies: Family[];
  /** Bogon intervals and addresses that yielded to newer registry allocations (decimal text for IPv6). */
  bogonsYielded: { v4: { intervals: number; addresses: number }; v6: { intervals: number; addresses: string } };
}

/**
 * Runs the sweep over both families and returns intervals and records.
 * `onFamily` receives each family's intervals as soon as they are swept (the
 * writer puts them out before the next family allocates); the merged index
 * then keeps only their counts.
 */
export function sweep(collector: Collector, onProgress?: (phase: string) => void, onFamily?: (intervals: FamilyIntervals) => void): MergedIndex {
  collector.seal();
  // Parsing leaves garbage behind (decoded files, line strings): collect it before the sweep allocates.
  Bun.gc(true);
  const strings = new StringPool();
  const records = new RecordTable(collector, strings);
  const density = new DensityCounter();

  const yielded = { v4: { intervals: 0, addresses: 0 }, v6: { intervals: 0, addresses: 0n } };
  const routedFamilies: Family[] = [];
  const runFamily = (fam: FamilyLayers): FamilyIntervals => {
    const family: Family = fam.family;
    const bogonsAsOf = fam.bogonsAsOf;
    onProgress?.(`normalising IPv${family} layers`);
    // Announced space comes from routes when the build has them, else from the ASN ranges.
    const hasRoutes = fam.values.route.length > 0;
    if (hasRoutes) routedFamilies.push(family);
    // Only layers with data take part in the sweep; absent layers read as 0 ("none").
    const present = VALUE_LAYERS.filter((l) => fam.values[l].length > 0);
    // Among equal-sized claims of a provider layer the fresher source wins.
    const valueSegs: Segments[] = present.map((l) => {
      const rows = fam.values[l];
      return rows instanceof SourcedRows ? normalizeMostSpecific(rows, (i) => collector.sourceDay(rows.sourceOf(i))) : normalizeMostSpecific(rows);
    });
    const flagSegs: Segments[] = [...fam.flags].map(([bit, rows]) => normalizeUnion(rows, bit));
    // The rows are now held as segments: let the collector's copies go before the sweep allocates.
    for (const l of VALUE_LAYERS) fam.values[l] = new RangeRows(family);
    fam.flags.clear();
    // Rows that were copied into segments are garbage now: freed before the sweep grows its own columns.
    Bun.gc(true);
    const valueCount = valueSegs.length;
    const all = [...valueSegs, ...flagSegs];
    const ptr = new Int32Array(all.length);
    // values has one slot per VALUE_LAYERS entry (absent layers stay 0).
    const slot = present.map((l) => VALUE_LAYERS.indexOf(l));
    const values = new Array<number>(VALUE_LAYERS.length).fill(0);
    const w = widthOf(family);
    const startWords = new GrowableU32(1 << 20);
    const recs = new GrowableU32(1 << 18);

    onProgress?.(`sweeping IPv${family}`);
    // The position and the next change point as one-row word columns (addr-words.ts): no BigInt per step.
    const pos = new Uint32Array(w);
    const next = new Uint32Array(w);
    for (;;) {
      // Each layer's value at pos, and the nearest point where any layer changes:
      // just past the nearest end of a covering segment, or the nearest start of
      // one ahead. The two minima are kept as (layer, segment) references.
      let endSeg = -1;
      let endAt = 0;
      let startSeg = -1;
      let startAt = 0;
      let flags = 0;
      for (let i = 0; i < all.length; i++) {
        const s = all[i];
        const n = s.count;
        let p = ptr[i];
        while (p < n && compareAt(s.ends, p, pos, 0, w) < 0) p++;
        ptr[i] = p;
        let val = 0;
        if (p < n && compareAt(s.starts, p, pos, 0, w) <= 0) {
          val = s.vals[p];
          if (endSeg < 0 || compareAt(s.ends, p, all[endSeg].ends, endAt, w) < 0) (endSeg = i), (endAt = p);
        } else if (p < n && (startSeg < 0 || compareAt(s.starts, p, all[startSeg].starts, startAt, w) < 0)) {
          (startSeg = i), (startAt = p);
        }
        if (i < valueCount) values[slot[i]] = val;
        else flags |= val;
      }
      // next = min(nearest end + 1, nearest start); past the last address: the end of the family.
      let atEnd = false;
      if (startSeg >= 0 && (endSeg < 0 || compareAt(all[startSeg].starts, startAt, all[endSeg].ends, endAt, w) <= 0)) {
        copyAt(all[startSeg].starts, startAt, next, 0, w);
      } else if (endSeg < 0 || isLastAt(all[endSeg].ends, endAt, w)) {
        atEnd = true;
      } else {
        stepAt(all[endSeg].ends, endAt, next, 0, w, 1);
      }

      const c = records.combine(values, flags, bogonsAsOf);
      if (records.bogonsYielded) {
        records.bogonsYielded = false;
        if (family === 4) (yielded.v4.intervals++, (yielded.v4.addresses += (atEnd ? 2 ** 32 : next[0]) - pos[0]));
        else (yielded.v6.intervals++, (yielded.v6.addresses += (atEnd ? 1n << 128n : (addrAt(next, 0, 4) as bigint)) - (addrAt(pos, 0, 4) as bigint)));
      }
      if (family === 4 && c.announcing !== undefined && (hasRoutes ? c.hasRoute : c.hasAsnRange)) {
        density.add(c.announcing, pos[0], atEnd ? 2 ** 32 - 1 : next[0] - 1, c.flags);
      }

      // Equal neighbours merge: a new interval starts only where the record changes.
      const k = recs.length;
      if (k === 0 || recs.at(k - 1) !== c.recordId) {
        for (let m = 0; m < w; m++) startWords.push(pos[m]);
        recs.push(c.recordId);
      }
      if (atEnd) break;
      copyAt(next, 0, pos, 0, w);
    }
    return { family, count: recs.length, startWords: startWords.view(), recs: recs.view() };
  };

  const handOver = (iv: FamilyIntervals): FamilyIntervals => {
    if (!onFamily) return iv;
    // The family's segments are garbage now: freed before the writer encodes its tables.
    Bun.gc(true);
    onFamily(iv);
    return { family: iv.family, count: iv.count, startWords: new Uint32Array(0), recs: new Uint32Array(0) };
  };
  const v4 = handOver(runFamily(collector.v4));
  Bun.gc(true);
  const v6 = handOver(runFamily(collector.v6));
  Bun.gc(true);
  const bogonsYielded = { v4: yielded.v4, v6: { intervals: yielded.v6.intervals, addresses: String(yielded.v6.addresses) } };
  return { v4, v6, records: records.rows, recordCount: records.count, asnRows: records.asnRows, providers: records.providers, strings, density: density.byAsn, bogonsYielded, routedFamilies };
}
