/**
 * Encoding the merged index into typed arrays: interval starts, first-level
 * tables, records and fixed-width sub-tables (see FORMAT.md).
 */
import type { Addr, Family } from '../../src/net/ip.ts';
import { formatCidr, formatIp } from '../../src/net/ip.ts';
import {
  ASN_CATEGORY_BITS,
  ASN_DETAIL_DROP,
  GEO_LAYOUT,
  GEO_PRESENT,
  RECORD_WIDTH,
  RecordCol,
  RPKI_CODES,
  RouteFlag,
  TableLayout,
  V4_DIRECT_BITS,
  V4_DIRECT_RECORD,
  V6_DIRECT_RECORD,
  V6_HASH_MULTIPLIER,
  V6_SUB_MAX_BITS,
} from '../../src/index/format.ts';
import type { Collector } from '../merge/collector.ts';
import { BUILD_RECORD_WIDTH } from '../merge/records.ts';
import { validateRoute, VrpIndex } from '../merge/rpki.ts';
import type { FamilyIntervals, MergedIndex } from '../merge/sweep.ts';
import type { StringIds } from '../merge/string-pool.ts';
import { GrowableU32 } from '../merge/growable.ts';

type Cell = string | number | null | undefined;

/**
 * Encodes rows into a u32 table per its layout (strings interned, floats as
 * f32 bits). Rows are given by index (`rowAt`) so that a table of a million
 * rows never exists as a million arrays at once.
 */
function encodeTable(layout: readonly string[], count: number, rowAt: (r: number) => Cell[], strings: StringIds): Uint32Array {
  const width = layout.length;
  const u32 = new Uint32Array(count * width);
  const f32 = new Float32Array(u32.buffer);
  for (let r = 0; r < count; r++) {
    // Formatting a million rows makes millions of short-lived strings; JSC sizes
    // its heap by the machine's RAM and lets them pile up, so collect the young
    // generation as we go (it keeps a full build's peak below the sweep's).
    if ((r & 0x3fff) === 0x3fff) Bun.gc(false);
    const row = rowAt(r);
    for (let c = 0; c < width; c++) {
      const kind = layout[c][0];
      const v = row[c];
      const at = r * width + c;
      if (kind === 's') u32[at] = strings.id(v === null || v === undefined ? '' : String(v));
      else if (kind === 'f') f32[at] = typeof v === 'number' && Number.isFinite(v) ? v : NaN;
      else u32[at] = typeof v === 'number' && v > 0 ? v >>> 0 : 0;
    }
  }
  return u32;
}

/**
 * First-level table over the top `bits` bits: l1[p] is the interval holding
 * the first address whose top bits are p; l1[2^bits] is the last interval.
 * A lookup of an address with top bits p searches only [l1[p], l1[p+1]].
 */
export function encodeL1(iv: FamilyIntervals, bits: number): Uint32Array {
  const size = 2 ** bits;
  const l1 = new Uint32Array(size + 1);
  const n = iv.count;
  const w = iv.startWords;
  const stride = iv.family === 4 ? 1 : 4;
  const shift = 32 - bits;
  // start of interval k <= (p << shift) followed by zeros?
  const startsAtOrBefore = (k: number, target: number): boolean => {
    const w0 = w[k * stride];
    if (w0 !== target) return w0 < target;
    for (let j = 1; j < stride; j++) if (w[k * stride + j] !== 0) return false;
    return true;
  };
  let i = 0;
  for (let p = 0; p < size; p++) {
    const target = (p * 2 ** shift) >>> 0;
    while (i + 1 < n && startsAtOrBefore(i + 1, target)) i++;
    l1[p] = i;
  }
  l1[size] = n - 1;
  return l1;
}

/** The previous index's IPv4 direct table and buckets, for placing buckets where they were (stable ids). */
export interface PreviousV4Direct {
  direct: Uint32Array;
  buckets: Uint32Array;
}

/** Words of a bucket of m intervals: m, the m low bytes padded to a word, m record ids. */
const bucketWords = (m: number) => 1 + Math.ceil(m / 4) + m;

/**
 * The IPv4 direct table (one u32 per /24) and its buckets (FORMAT.md): a /24
 * inside one interval stores that interval's record id with the
 * V4_DIRECT_RECORD bit; any other /24 stores the word offset of a bucket
 * [m, m low bytes of the starts (padded to a word), m record ids] listing the
 * m intervals that meet it, the first being the one that holds its .0.
 * Given the previous index's table, a /24 whose bucket has the size it had
 * keeps its offset, another takes a vanished bucket's place of its size or
 * appends: one new bucket no longer shifts every later offset. `deadWords`
 * counts the words of vanished buckets no new one took (left as they were).
 */
export function encodeV4Direct(iv: FamilyIntervals, previous?: PreviousV4Direct): { direct: Uint32Array; buckets: Uint32Array; deadWords: number } {
  const slots = 2 ** V4_DIRECT_BITS;
  const shift = 32 - V4_DIRECT_BITS;
  const direct = new Uint32Array(slots);
  const buckets = new GrowableU32(previous ? previous.buckets.length + 1024 : undefined);
  const starts = iv.startWords;
  const recs = iv.recs;
  const n = iv.count;
  if (n === 0 || starts[0] !== 0) throw new Error('IPv4 intervals must start at 0.0.0.0');
  const writeBucket = (at: number, i: number, m: number) => {
    const put = (k: number, v: number) => (at + k < buckets.length ? buckets.set(at + k, v) : buckets.push(v));
    let k = 0;
    put(k++, m);
    // Low bytes of the starts, four per word, little-endian like the file; the first is 0 (the /24's .0).
    for (let b0 = 0; b0 < m; b0 += 4) {
      let w = 0;
      for (let b = 0; b < 4 && b0 + b < m; b++) w |= (b0 + b === 0 ? 0 : starts[i + b0 + b] & 0xff) << (8 * b);
      put(k++, w >>> 0);
    }
    for (let r = 0; r < m; r++) put(k++, recs[i + r]);
  };
  const before = previous?.buckets;
  if (before) for (let k = 0; k < before.length; k++) buckets.push(before[k]);
  // Vanished previous buckets by size (words), and the /24s still to place: (p, first interval, m).
  const free = new Map<number, number[]>();
  const pending: number[] = [];
  const prevBucketAt = (p: number): number => {
    const e = previous ? previous.direct[p] : V4_DIRECT_RECORD;
    return (e & V4_DIRECT_RECORD) === 0 && e < before!.length ? e : -1;
  };
  let i = 0;
  for (let p = 0; p < slots; p++) {
    const base = p * 2 ** shift;
    const last = base + 2 ** shift - 1;
    while (i + 1 < n && starts[i + 1] <= base) i++;
    let j = i + 1;
    while (j < n && starts[j] <= last) j++;
    const was = prevBucketAt(p);
    const wasWords = was < 0 ? 0 : bucketWords(before![was]);
    if (j === i + 1) {
      if (recs[i] >= V4_DIRECT_RECORD) throw new Error(`record id ${recs[i]} does not fit the IPv4 direct table`);
      direct[p] = (V4_DIRECT_RECORD | recs[i]) >>> 0;
      if (was >= 0) (free.get(wasWords) ?? free.set(wasWords, []).get(wasWords)!).push(was);
      i = j - 1;
      continue;
    }
    const m = j - i;
    if (was >= 0 && wasWords === bucketWords(m)) {
      direct[p] = was;
      writeBucket(was, i, m);
    } else if (previous) {
      if (was >= 0) (free.get(wasWords) ?? free.set(wasWords, []).get(wasWords)!).push(was);
      pending.push(p, i, m);
    } else {
      direct[p] = buckets.length;
      writeBucket(buckets.length, i, m);
    }
    i = j - 1;
  }
  for (let k = 0; k < pending.length; k += 3) {
    const m = pending[k + 2];
    const at = free.get(bucketWords(m))?.pop() ?? buckets.length;
    direct[pending[k]] = at;
    writeBucket(at, pending[k + 1], m);
  }
  let deadWords = 0;
  for (const [words, offsets] of free) deadWords += words * offsets.length;
  if (buckets.length >= V4_DIRECT_RECORD) throw new Error('IPv4 bucket table too large for the direct table');
  return { direct, buckets: buckets.view(), deadWords };
}

/**
 * The IPv6 /32 hash and its per-/32 nodes (FORMAT.md). Every /32 holding at
 * least one interval start gets a node over the next s bits, s = one more
 * than log2 of its start count (at most V6_SUB_MAX_BITS), so most entries
 * cover a part of the /32 that lies inside one interval and hold its record
 * id; the others hold the interval containing the part's first address.
 */
export function encodeV6Direct(iv: FamilyIntervals): { hash: Uint32Array; nodes: Uint32Array } {
  const w = iv.startWords;
  const recs = iv.recs;
  const n = iv.count;
  const bitsFor = (starts: number) => Math.min(V6_SUB_MAX_BITS, Math.ceil(Math.log2(starts)) + 1);
  // Sized exactly first: a growing buffer would hold two copies of a large table at the build's memory peak.
  let size = 0;
  for (let a = 0; a < n; ) {
    let b = a + 1;
    while (b < n && w[4 * b] === w[4 * a]) b++;
    size += 1 + 2 ** bitsFor(b - a);
    a = b;
  }
  const nodes = new Uint32Array(size);
  let at = 0;
  const keys: number[] = [];
  const offsets: number[] = [];
  for (let a = 0; a < n; ) {
    const w0 = w[4 * a];
    let b = a + 1;
    while (b < n && w[4 * b] === w0) b++;
    const bits = bitsFor(b - a);
    const shift = 32 - bits;
    keys.push(w0);
    offsets.push(at);
    nodes[at++] = bits;
    // Interval containing the /32's first address: the last start before it, or the /32's own first start.
    let i = Math.max(a - 1, 0);
    for (let j = 0; j < 2 ** bits; j++) {
      const base = (j * 2 ** shift) >>> 0; // w1 of the part's first address (w2 = w3 = 0)
      for (;;) {
        const k = i + 1;
        if (k >= b || !(w[4 * k + 1] < base || (w[4 * k + 1] === base && w[4 * k + 2] === 0 && w[4 * k + 3] === 0))) break;
        i = k;
      }
      // Inside one interval when the next start is in a later /32 or a later part.
      const inside = i + 1 >= b || w[4 * (i + 1) + 1] >>> shift !== j;
      if (inside && recs[i] >= V6_DIRECT_RECORD) throw new Error(`record id ${recs[i]} does not fit the IPv6 direct entries`);
      nodes[at++] = inside ? (V6_DIRECT_RECORD | recs[i]) >>> 0 : i;
    }
    a = b;
  }
  if (size >= 2 ** 32 - 1) throw new Error('IPv6 node table too large');
  const hashBits = Math.max(4, Math.ceil(Math.log2(keys.length / 0.6)));
  const mask = 2 ** hashBits - 1;
  const hash = new Uint32Array(2 * 2 ** hashBits);
  for (let k = 0; k < keys.length; k++) {
    let h = Math.imul(keys[k], V6_HASH_MULTIPLIER) >>> (32 - hashBits);
    while (hash[2 * h + 1] !== 0) h = (h + 1) & mask;
    hash[2 * h] = keys[k];
    hash[2 * h + 1] = offsets[k] + 1;
  }
  return { hash, nodes };
}

/**
 * Record rows in the file layout: the build rows' columns with the geo value
 * id replaced by the geolocation itself (GEO_LAYOUT), so a lookup reads one
 * row instead of a row and then a geo row.
 */
export function encodeRecords(buildRows: Uint32Array, count: number, geo: Uint32Array): Uint32Array {
  const out = new Uint32Array(count * RECORD_WIDTH);
  const f32 = new Float32Array(out.buffer);
  for (let r = 0; r < count; r++) encodeRecordRow(buildRows, r, geo, out, f32, r * RECORD_WIDTH);
  return out;
}

/** Sub-table row ids of the file per record column, where they differ from the build's (stable ids). */
export type ColumnIds = ReadonlyMap<number, Uint32Array>;

/**
 * Writes build record `r` in the file layout into `out` (and its float view)
 * at word `to`; `columnIds` renumbers the sub-table columns it names.
 */
export function encodeRecordRow(buildRows: Uint32Array, r: number, geo: Uint32Array, out: Uint32Array, f32: Float32Array, to: number, columnIds?: ColumnIds): void {
  const g = GEO_LAYOUT.length;
  const from = r * BUILD_RECORD_WIDTH;
  for (let c = 0; c < RecordCol.GEO; c++) {
    const ids = columnIds?.get(c);
    out[to + c] = ids ? ids[buildRows[from + c]] : buildRows[from + c];
  }
  const geoId = buildRows[from + RecordCol.GEO];
  if (geoId === 0) {
    // No location: string ids 0, coordinates NaN, no presence bit.
    for (let c = 0; c < g; c++) {
      if (GEO_LAYOUT[c][0] === 'f') f32[to + RecordCol.GEO + c] = NaN;
      else out[to + RecordCol.GEO + c] = 0;
    }
    return;
  }
  for (let c = 0; c < g; c++) out[to + RecordCol.GEO + c] = geo[geoId * g + c];
  out[to + RecordCol.GEO] = (out[to + RecordCol.GEO] | GEO_PRESENT) >>> 0;
}

/**
 * The block as a single CIDR when it is one: its size a power of two and its
 * start aligned to it (tested directly; splitting an IPv6 block into CIDRs
 * makes hundreds of BigInts per block).
 */
function blockCidr(family: Family, start: Addr, end: Addr): string | null {
  if (family === 4) {
    const size = (end as number) - (start as number) + 1;
    const len = 32 - Math.log2(size);
    return Number.isInteger(len) && (start as number) % size === 0 ? formatCidr(4, start, len) : null;
  }
  const size = (end as bigint) - (start as bigint) + 1n;
  if ((size & (size - 1n)) !== 0n || ((start as bigint) & (size - 1n)) !== 0n) return null;
  return formatCidr(6, start, 128 - (size.toString(2).length - 1));
}

/** The geo values as GEO_LAYOUT rows (row 0 unused), for encodeRecords. */
export function encodeGeoRows(collector: Collector, strings: StringIds): Uint32Array {
  return collector.geoValues.encode(strings);
}

/** How many sub-tables subTableEncoders yields (the file's directory is sized before the sweep). */
export const SUB_TABLE_COUNT = 8;

/**
 * Every sub-table's section tag and its encoder, in the order they are
 * encoded (which is the order their strings are interned in): the caller
 * encodes and writes one at a time.
 */
export function subTableEncoders(collector: Collector, merged: MergedIndex): [tag: string, encode: () => Uint32Array][] {
  const s = merged.strings;
  // A table over a value list: row r is f(values[r]); the reserved row 0 stays empty.
  const table = <T>(layout: readonly string[], values: (T | undefined)[], f: (v: T) => Cell[]): Uint32Array =>
    encodeTable(layout, values.length, (r) => (values[r] === undefined ? [] : f(values[r]!)), s);
  const familyOf = (start: Addr): Family => (typeof start === 'bigint' ? 6 : 4);

  return [
    ['TASN', () => table(TableLayout.TASN, merged.asnRows.values, (a) => [a.asn, a.name])],
    [
      'TALC',
      () =>
        table(TableLayout.TALC, collector.allocationValues.values, (a) => {
          const fam = familyOf(a.blockStart);
          return [
            blockCidr(fam, a.blockStart, a.blockEnd),
            `${formatIp(fam, a.blockStart)} - ${formatIp(fam, a.blockEnd)}`,
            a.registry,
            a.countryCode,
            a.status,
            a.date,
          ];
        }),
    ],
    [
      'TRTE',
      () => {
        const vrpIndex = new VrpIndex(collector.vrps);
        const routes = collector.routes;
        return encodeTable(TableLayout.TRTE, routes.size, (id) => {
          if (id === 0) return [];
          const family = routes.family(id);
          const start = routes.start(id);
          const prefixLen = routes.prefixLen(id);
          const origins = routes.origins(id);
          const asSet = routes.asSet(id);
          const status = validateRoute(vrpIndex, family, start, prefixLen, origins, asSet);
          const distinct = new Set(origins).size;
          const flags = (distinct > 1 && !asSet ? RouteFlag.ORIGIN_CONFLICT : 0) | (asSet ? RouteFlag.AS_SET : 0);
          return [formatCidr(family, start, prefixLen), origins.join(','), RPKI_CODES.indexOf(status), flags];
        }, s);
      },
    ],
    ['TPRV', () => table(TableLayout.TPRV, merged.providers.values, (p) => [p.name, p.category, p.service, p.region])],
    ['TTHL', () => table(TableLayout.TTHL, collector.threatListValues.values, (t) => [t.list, t.reference])],
    ['TTHF', () => table(TableLayout.TTHF, collector.threatFeedValues.values, (t) => [t.malware, t.firstSeen, t.lastSeen, t.port, t.status])],
    ['TSPC', () => table(TableLayout.TSPC, collector.specialUseValues.values, (v) => [v.name, v.cidr, v.rfc, v.kind, v.global ? 1 : 0])],
    ['ASND', () => asnDetails(collector, merged, s)],
  ];
}

/** The ASND table: one row per ASN known to the build, sorted by ASN. */
function asnDetails(collector: Collector, merged: MergedIndex, strings: StringIds): Uint32Array {
  const orgs = new Map<number, string>();
  for (const v of collector.asnValues.values) if (v?.org && !orgs.has(v.asn)) orgs.set(v.asn, v.org);
  const asns = new Set<number>([
    ...collector.asnNames.keys(),
    ...orgs.keys(),
    ...collector.asnDrops.keys(),
    ...collector.asnCategories.keys(),
    ...merged.density.keys(),
  ]);
  const sorted = [...asns].filter((a) => a > 0).sort((a, b) => a - b);
  return encodeTable(TableLayout.ASND, sorted.length, (r) => {
    const asn = sorted[r];
    const d = merged.density.get(asn);
    const drop = collector.asnDrops.get(asn);
    let flags = drop ? ASN_DETAIL_DROP : 0;
    for (const c of collector.asnCategories.get(asn) ?? []) flags |= ASN_CATEGORY_BITS[c] ?? 0;
    return [
      asn,
      collector.asnNames.get(asn) ?? orgs.get(asn),
      d?.threatNetworks ?? 0,
      d?.threatAddresses ?? 0,
      d?.total ?? 0,
      drop?.asName,
      drop?.rir,
      drop?.domain,
      drop?.countryCode,
      flags,
    ];
  }, strings);
}
