/**
 * Ranges of one layer and one family, and their normalisation into sorted,
 * disjoint segments: "most specific wins" for value layers, union for flags.
 * Bounds live in u32 word columns (addr-words.ts), values in a u32 column:
 * no object per row.
 */
import type { Addr, Family } from '../../src/net/ip.ts';
import { compareAt, copyAt, isLastAt, isNextAt, pushAddr, stepAt, subtractAt, widthOf } from './addr-words.ts';
import { GrowableU32 } from './growable.ts';

/** Disjoint, ascending segments [starts[i], ends[i]] (w words each) carrying vals[i] (> 0). */
export interface Segments {
  w: 1 | 4;
  count: number;
  starts: Uint32Array;
  ends: Uint32Array;
  vals: Uint32Array;
}

/** Rows as reported by parsers, in arrival order (the order breaks ties). */
export class RangeRows {
  readonly w: 1 | 4;
  starts: GrowableU32;
  ends: GrowableU32;
  vals: GrowableU32;

  constructor(readonly family: Family) {
    this.w = widthOf(family);
    this.starts = new GrowableU32(1024 * this.w);
    this.ends = new GrowableU32(1024 * this.w);
    this.vals = new GrowableU32(1024);
  }

  get length(): number {
    return this.vals.length;
  }

  /** Adds an inclusive range with a value id (> 0). */
  push(start: Addr, end: Addr, val: number): void {
    pushAddr(this.starts, this.family, start);
    pushAddr(this.ends, this.family, end);
    this.vals.push(val);
  }

  /** Adds an inclusive range given as words (w each). */
  pushWords(start: Uint32Array, end: Uint32Array, val: number): void {
    for (let k = 0; k < this.w; k++) this.starts.push(start[k]);
    for (let k = 0; k < this.w; k++) this.ends.push(end[k]);
    this.vals.push(val);
  }
}

/** Segments written in order, merging a segment into the previous one when adjacent with the same value. */
class SegmentWriter {
  count = 0;
  constructor(
    readonly w: 1 | 4,
    readonly starts: GrowableU32,
    readonly ends: GrowableU32,
    readonly vals: GrowableU32,
  ) {}

  /** A writer over fresh columns. */
  static fresh(w: 1 | 4): SegmentWriter {
    return new SegmentWriter(w, new GrowableU32(1024 * w), new GrowableU32(1024 * w), new GrowableU32(1024));
  }

  /** Appends [s[si], e[ei]] with val. */
  append(s: Uint32Array, si: number, e: Uint32Array, ei: number, val: number): void {
    const w = this.w;
    const k = this.count - 1;
    if (k >= 0 && this.vals.at(k) === val && isNextAt(this.ends.raw(), k, s, si, w)) {
      for (let m = 0; m < w; m++) this.ends.set(k * w + m, e[ei * w + m]);
      return;
    }
    for (let m = 0; m < w; m++) this.starts.push(s[si * w + m]);
    for (let m = 0; m < w; m++) this.ends.push(e[ei * w + m]);
    this.vals.push(val);
    this.count++;
  }

  /** Appends over the rows being read (in-place normalisation): row `to` (<= the row read) is overwritten. */
  overwrite(s: Uint32Array, e: Uint32Array, v: Uint32Array, i: number): void {
    const w = this.w;
    const k = this.count - 1;
    if (k >= 0 && v[k] === v[i] && isNextAt(e, k, s, i, w)) {
      copyAt(e, i, e, k, w);
      return;
    }
    const to = this.count++;
    if (to !== i) {
      copyAt(s, i, s, to, w);
      copyAt(e, i, e, to, w);
      v[to] = v[i];
    }
  }

  segments(): Segments {
    const w = this.w;
    this.starts.truncate(this.count * w);
    this.ends.truncate(this.count * w);
    this.vals.truncate(this.count);
    return { w, count: this.count, starts: this.starts.view(), ends: this.ends.view(), vals: this.vals.view() };
  }
}

/** Row order by start ascending, then the wider range first, then arrival; null when the rows are already in it. */
function sortedOrder(rows: RangeRows, S: Uint32Array, E: Uint32Array): Uint32Array | null {
  const n = rows.length;
  const w = rows.w;
  // Fast path: parsers of big sorted feeds (MMDB walks, CSVs) deliver rows in order, without equal starts.
  let inOrder = true;
  for (let i = 1; i < n && inOrder; i++) if (compareAt(S, i - 1, S, i, w) >= 0) inOrder = false;
  if (inOrder) return null;
  const arr = new Array<number>(n);
  for (let i = 0; i < n; i++) arr[i] = i;
  arr.sort((a, b) => {
    const s = compareAt(S, a, S, b, w);
    if (s !== 0) return s;
    const e = compareAt(E, b, E, a, w);
    if (e !== 0) return e;
    return a - b;
  });
  return Uint32Array.from(arr);
}

/**
 * Most specific wins: where ranges overlap, the smallest range's value holds;
 * among equal-sized ranges the higher `rank` (e.g. the fresher source) wins,
 * then the one reported last (later sources override). Consumes the rows:
 * ordered disjoint rows (the big feeds) are normalised in their own columns.
 */
export function normalizeMostSpecific(rows: RangeRows, rank?: (row: number) => number): Segments {
  const w = rows.w;
  const n = rows.length;
  if (n === 0) return SegmentWriter.fresh(w).segments();
  const S = rows.starts.view();
  const E = rows.ends.view();
  const V = rows.vals.view();
  const order = sortedOrder(rows, S, E);
  const at = (k: number) => (order === null ? k : order[k]);

  // Disjoint input (the common case for big feeds) needs no heap.
  let overlapping = false;
  for (let k = 1; k < n; k++) {
    if (compareAt(S, at(k), E, at(k - 1), w) <= 0) {
      overlapping = true;
      break;
    }
  }
  if (!overlapping) {
    if (order === null) {
      const out = new SegmentWriter(w, rows.starts, rows.ends, rows.vals);
      for (let i = 0; i < n; i++) out.overwrite(S, E, V, i);
      return out.segments();
    }
    const out = SegmentWriter.fresh(w);
    for (let k = 0; k < n; k++) out.append(S, order[k], E, order[k], V[order[k]]);
    return out.segments();
  }

  const out = SegmentWriter.fresh(w);
  // Sizes computed once per row: the heap compares them millions of times.
  const sizes = new Uint32Array(n * w);
  for (let i = 0; i < n; i++) subtractAt(E, S, i, sizes, i, w);
  // Heap of active rows: the smallest range on top, then the higher rank, then later arrival.
  const heap: number[] = [];
  const better = (a: number, b: number): boolean => {
    const d = compareAt(sizes, a, sizes, b, w);
    if (d !== 0) return d < 0;
    if (rank) {
      const ra = rank(a);
      const rb = rank(b);
      if (ra !== rb) return ra > rb;
    }
    return a > b;
  };
  const push = (i: number) => {
    heap.push(i);
    let c = heap.length - 1;
    while (c > 0) {
      const p = (c - 1) >> 1;
      if (!better(heap[c], heap[p])) break;
      const t = heap[c];
      heap[c] = heap[p];
      heap[p] = t;
      c = p;
    }
  };
  const pop = () => {
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    let p = 0;
    for (;;) {
      const l = 2 * p + 1;
      const r = l + 1;
      let m = p;
      if (l < heap.length && better(heap[l], heap[m])) m = l;
      if (r < heap.length && better(heap[r], heap[m])) m = r;
      if (m === p) break;
      const t = heap[m];
      heap[m] = heap[p];
      heap[p] = t;
      p = m;
    }
  };

  // pos and the segment's end as one-row scratch columns.
  const pos = new Uint32Array(w);
  const segEnd = new Uint32Array(w);
  let k = 0;
  copyAt(S, at(0), pos, 0, w);
  while (k < n || heap.length > 0) {
    if (heap.length === 0 && k < n && compareAt(S, at(k), pos, 0, w) > 0) copyAt(S, at(k), pos, 0, w);
    while (k < n && compareAt(S, at(k), pos, 0, w) <= 0) push(at(k++));
    while (heap.length > 0 && compareAt(E, heap[0], pos, 0, w) < 0) pop();
    if (heap.length === 0) continue;
    const top = heap[0];
    copyAt(E, top, segEnd, 0, w);
    if (k < n && compareAt(S, at(k), segEnd, 0, w) <= 0) stepAt(S, at(k), segEnd, 0, w, -1);
    out.append(pos, 0, segEnd, 0, V[top]);
    // Past the family's last address nothing can start, and every active row has ended.
    if (isLastAt(segEnd, 0, w)) break;
    stepAt(segEnd, 0, pos, 0, w, 1);
  }
  return out.segments();
}

/** Union of all rows' coverage (values ignored; every segment gets `val`). */
export function normalizeUnion(rows: RangeRows, val: number): Segments {
  const w = rows.w;
  const n = rows.length;
  const out = SegmentWriter.fresh(w);
  if (n === 0) return out.segments();
  const S = rows.starts.view();
  const E = rows.ends.view();
  const order = sortedOrder(rows, S, E);
  const at = (k: number) => (order === null ? k : order[k]);
  // The current union as rows of S (its start) and E (its end).
  let curStart = at(0);
  let curEnd = at(0);
  for (let k = 1; k < n; k++) {
    const i = at(k);
    const touches = compareAt(S, i, E, curEnd, w) <= 0 || isNextAt(E, curEnd, S, i, w);
    if (touches) {
      if (compareAt(E, i, E, curEnd, w) > 0) curEnd = i;
    } else {
      out.append(S, curStart, E, curEnd, val);
      curStart = i;
      curEnd = i;
    }
  }
  out.append(S, curStart, E, curEnd, val);
  return out.segments();
}
