/**
 * The sweep: every layer normalised to disjoint segments, then one pass over
 * all their boundaries yields elementary intervals, each pointing to a
 * deduplicated record that combines every layer covering it.
 */
import type { Addr, Family } from '../../src/net/ip.ts';
import { Flag } from '../../src/index/record.ts';
import { RECORD_WIDTH, RecordCol } from '../../src/index/format.ts';
import type { Category } from '../sink.ts';
import { ASN_CATEGORY_FLAG, type Collector, type FamilyLayers, VALUE_LAYERS } from './collector.ts';
import { normalizeMostSpecific, normalizeUnion, RangeRows, type Segments } from './range-rows.ts';
import { StringTable, ValueTable } from './value-table.ts';
import { GrowableU32 } from './growable.ts';

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

/** ASN row of the record's ASN sub-table. */
export interface AsnRow {
  asn: number;
  name?: string;
}

/** Per-ASN accumulators for threat_density over announced IPv4 space. */
export interface AsnDensity {
  total: number;
  threatAddresses: number;
  threatNetworks: number;
}

/** The merged index, ready for the writer. */
export interface MergedIndex {
  v4: FamilyIntervals;
  v6: FamilyIntervals;
  /** Flat record rows, RECORD_WIDTH u32 each; record 0 is the empty record. */
  records: Uint32Array;
  recordCount: number;
  asnRows: ValueTable<AsnRow>;
  strings: StringTable;
  density: Map<number, AsnDensity>;
}

const THREAT_FLAGS = Flag.DROP | Flag.THREAT_LIST | Flag.THREAT_FEED;

/** Flags an ASN lends to every address it announces. */
function asnFlags(collector: Collector, asn: number): number {
  let flags = 0;
  const cats = collector.asnCategories.get(asn);
  if (cats) for (const c of cats) flags |= ASN_CATEGORY_FLAG[c as Category] ?? 0;
  if (collector.asnDrops.has(asn)) flags |= Flag.ASN_DROP;
  return flags;
}

/** Runs the sweep over both families and returns intervals and records. */
export function sweep(collector: Collector, onProgress?: (phase: string) => void): MergedIndex {
  const strings = new StringTable();
  const asnRows = new ValueTable<AsnRow>();
  const recordIds = new Map<string, number>();
  const records = new GrowableU32(RECORD_WIDTH * 1024);
  for (let c = 0; c < RECORD_WIDTH; c++) records.push(0);
  recordIds.set(new Array(RECORD_WIDTH).fill(0).join(','), 0);
  const density = new Map<number, AsnDensity>();
  const asnFlagCache = new Map<number, number>();
  const crawlerStringIds = collector.crawlerValues.values.map((k) => strings.id(k));

  const recordFor = (cols: number[]): number => {
    const key = cols.join(',');
    let id = recordIds.get(key);
    if (id === undefined) {
      id = recordIds.size;
      recordIds.set(key, id);
      for (let c = 0; c < RECORD_WIDTH; c++) records.push(cols[c]);
    }
    return id;
  };

  const runFamily = (fam: FamilyLayers): FamilyIntervals => {
    const family: Family = fam.family;
    onProgress?.(`normalising IPv${family} layers`);
    // Announced space comes from routes when the build has them, else from the ASN ranges.
    const hasRoutes = fam.values.route.length > 0;
    // Only layers with data take part in the sweep; absent layers read as 0 ("none").
    const present = VALUE_LAYERS.filter((l) => fam.values[l].length > 0);
    const valueSegs: Segments[] = present.map((l) => normalizeMostSpecific(fam.values[l]));
    const flagSegs: Segments[] = [...fam.flags].map(([bit, rows]) => normalizeUnion(rows, bit));
    // The rows are now held as segments: let the collector's copies go before the sweep allocates.
    for (const l of VALUE_LAYERS) fam.values[l] = new RangeRows(family);
    fam.flags.clear();
    const valueCount = valueSegs.length;
    const all = [...valueSegs, ...flagSegs];
    const ptr = new Int32Array(all.length);
    // cur has one slot per VALUE_LAYERS entry (absent ones stay 0) followed by the flag layers' values.
    const slot = present.map((l) => VALUE_LAYERS.indexOf(l));
    const values = new Array<number>(VALUE_LAYERS.length).fill(0);
    const flagVals = new Array<number>(flagSegs.length).fill(0);
    const END: Addr = family === 4 ? 2 ** 32 : 1n << 128n;
    const startWords = new GrowableU32();
    const recs = new GrowableU32();
    const cols = new Array<number>(RECORD_WIDTH).fill(0);
    const layerIndex = Object.fromEntries(VALUE_LAYERS.map((l, i) => [l, i])) as Record<(typeof VALUE_LAYERS)[number], number>;
    let lastThreatAsn = -1;
    let lastThreatEnd: Addr = -1;

    onProgress?.(`sweeping IPv${family}`);
    let pos: Addr = family === 4 ? 0 : 0n;
    for (;;) {
      let next: Addr = END;
      for (let i = 0; i < all.length; i++) {
        const s = all[i];
        const n = s.starts.length;
        let p = ptr[i];
        while (p < n && s.ends[p] < pos) p++;
        ptr[i] = p;
        let change: Addr;
        let val = 0;
        if (p < n && s.starts[p] <= pos) {
          val = s.vals[p];
          change = family === 4 ? (s.ends[p] as number) + 1 : (s.ends[p] as bigint) + 1n;
        } else {
          change = p < n ? s.starts[p] : END;
        }
        if (i < valueCount) values[slot[i]] = val;
        else flagVals[i - valueCount] = val;
        if (change < next) next = change;
      }

      // Combine the layers into one record.
      let flags = 0;
      for (let i = 0; i < flagVals.length; i++) flags |= flagVals[i];
      const cur = values;
      const asnVal = collector.asnValues.get(cur[layerIndex.asn]);
      const routeVal = collector.routeValues.get(cur[layerIndex.route]);
      const routeOrigin = routeVal && !routeVal.asSet && routeVal.origins.length > 0 ? routeVal.origins[0] : undefined;
      let asnRowId = 0;
      let asn: number | undefined;
      if (asnVal) {
        asn = asnVal.asn;
        asnRowId = asnRows.intern({ asn, name: asnVal.org ?? collector.asnNames.get(asn) }, `${asn}|${asnVal.org ?? ''}`);
      } else if (routeOrigin !== undefined) {
        asn = routeOrigin;
        asnRowId = asnRows.intern({ asn, name: collector.asnNames.get(asn) }, `${asn}|`);
      }
      const announcing = routeOrigin ?? asn;
      if (announcing !== undefined) {
        let af = asnFlagCache.get(announcing);
        if (af === undefined) asnFlagCache.set(announcing, (af = asnFlags(collector, announcing)));
        flags |= af;
      }
      cols[RecordCol.GEO] = cur[layerIndex.geo];
      cols[RecordCol.ASN] = asnRowId;
      cols[RecordCol.ALLOCATION] = cur[layerIndex.allocation];
      cols[RecordCol.ROUTE] = cur[layerIndex.route];
      cols[RecordCol.PROVIDER] = cur[layerIndex.provider];
      cols[RecordCol.CRAWLER] = crawlerStringIds[cur[layerIndex.crawler]] ?? 0;
      cols[RecordCol.THREAT_LIST] = cur[layerIndex.threatList];
      cols[RecordCol.THREAT_FEED] = cur[layerIndex.threatFeed];
      cols[RecordCol.SPECIAL_USE] = cur[layerIndex.specialUse];
      cols[RecordCol.FLAGS] = flags >>> 0;
      const rec = recordFor(cols);

      // threat_density: IPv4 space announced by each ASN, and its threat-listed part.
      if (family === 4 && announcing !== undefined && (hasRoutes ? routeVal !== undefined : asnVal !== undefined)) {
        const size = (next as number) - (pos as number);
        let d = density.get(announcing);
        if (!d) density.set(announcing, (d = { total: 0, threatAddresses: 0, threatNetworks: 0 }));
        d.total += size;
        if (flags & THREAT_FLAGS) {
          d.threatAddresses += size;
          // Adjacent threat intervals of the same ASN count as one network.
          if (!(lastThreatAsn === announcing && lastThreatEnd === (pos as number) - 1)) d.threatNetworks++;
          lastThreatAsn = announcing;
          lastThreatEnd = (next as number) - 1;
        }
      }

      const k = recs.length;
      if (k === 0 || recs.at(k - 1) !== rec) {
        if (family === 4) startWords.push(pos as number);
        else {
          const v = pos as bigint;
          startWords.push(Number(v >> 96n));
          startWords.push(Number((v >> 64n) & 0xffffffffn));
          startWords.push(Number((v >> 32n) & 0xffffffffn));
          startWords.push(Number(v & 0xffffffffn));
        }
        recs.push(rec);
      }
      if (next >= END) break;
      pos = next;
    }
    return { family, count: recs.length, startWords: startWords.view(), recs: recs.view() };
  };

  const v4 = runFamily(collector.v4);
  Bun.gc(true);
  const v6 = runFamily(collector.v6);
  Bun.gc(true);
  return { v4, v6, records: records.view(), recordCount: recordIds.size, asnRows, strings, density };
}
