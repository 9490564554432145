/**
 * Ranges of one layer and one family, and their normalisation into sorted,
 * disjoint segments: "most specific wins" for value layers, union for flags.
 */
import type { Addr, Family } from '../../src/net/ip.ts';

/** Disjoint, ascending segments [starts[i], ends[i]] carrying vals[i] (> 0). */
export interface Segments {
  starts: Addr[];
  ends: Addr[];
  vals: number[];
}

/** Rows as reported by parsers, in arrival order (the order breaks ties). */
export class RangeRows {
  readonly starts: Addr[] = [];
  readonly ends: Addr[] = [];
  readonly vals: number[] = [];

  constructor(readonly family: Family) {}

  get length(): number {
    return this.starts.length;
  }

  /** Adds an inclusive range with a value id (> 0). */
  push(start: Addr, end: Addr, val: number): void {
    this.starts.push(start);
    this.ends.push(end);
    this.vals.push(val);
  }
}

/** Row order by start ascending, then the wider range first, then arrival. */
function sortedOrder(rows: RangeRows): Uint32Array {
  const n = rows.length;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  const { starts, ends } = rows;
  // Fast path: parsers of big sorted feeds (MMDB walks, CSVs) deliver rows in order.
  let sorted = true;
  for (let i = 1; i < n && sorted; i++) if (starts[i - 1] > starts[i]) sorted = false;
  if (sorted) {
    // Still needs the tie rule for equal starts; rare enough to check cheaply.
    let ties = false;
    for (let i = 1; i < n && !ties; i++) if (starts[i - 1] === starts[i]) ties = true;
    if (!ties) return order;
  }
  const arr = Array.from(order);
  arr.sort((a, b) => {
    const sa = starts[a];
    const sb = starts[b];
    if (sa !== sb) return sa < sb ? -1 : 1;
    const ea = ends[a];
    const eb = ends[b];
    if (ea !== eb) return ea > eb ? -1 : 1;
    return a - b;
  });
  return Uint32Array.from(arr);
}

/** Appends a segment, extending the previous one when adjacent with the same value. */
function appendSegment(out: Segments, family: Family, start: Addr, end: Addr, val: number): void {
  const k = out.starts.length - 1;
  if (k >= 0 && out.vals[k] === val) {
    const prevEnd = out.ends[k];
    const adjacent = family === 4 ? (prevEnd as number) + 1 === start : (prevEnd as bigint) + 1n === start;
    if (adjacent) {
      out.ends[k] = end;
      return;
    }
  }
  out.starts.push(start);
  out.ends.push(end);
  out.vals.push(val);
}

/**
 * Most specific wins: where ranges overlap, the smallest range's value holds;
 * among equal-sized ranges the higher `rank` (e.g. the fresher source) wins,
 * then the one reported last (later sources override).
 */
export function normalizeMostSpecific(rows: RangeRows, rank?: (row: number) => number): Segments {
  const out: Segments = { starts: [], ends: [], vals: [] };
  const n = rows.length;
  if (n === 0) return out;
  const { family, starts, ends, vals } = rows;
  const order = sortedOrder(rows);

  // Disjoint input (the common case for big feeds) needs no heap.
  let overlapping = false;
  for (let k = 1; k < n; k++) {
    if (starts[order[k]] <= ends[order[k - 1]]) {
      overlapping = true;
      break;
    }
  }
  if (!overlapping) {
    for (let k = 0; k < n; k++) {
      const i = order[k];
      appendSegment(out, family, starts[i], ends[i], vals[i]);
    }
    return out;
  }

  const one: Addr = family === 4 ? 1 : 1n;
  // Sizes computed once per row: the heap compares them millions of times,
  // and an IPv6 subtraction allocates a BigInt each time.
  const sizes: Addr[] = new Array(n);
  for (let i = 0; i < n; i++) {
    sizes[i] = family === 4 ? (ends[i] as number) - (starts[i] as number) : (ends[i] as bigint) - (starts[i] as bigint);
  }
  // Heap of active rows: the smallest range on top, then the higher rank, then later arrival.
  const heap: number[] = [];
  const better = (a: number, b: number): boolean => {
    const sa = sizes[a];
    const sb = sizes[b];
    if (sa !== sb) return sa < sb;
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
      // A temporary, not a destructuring swap: that allocates an array per step.
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

  let k = 0;
  let pos: Addr = starts[order[0]];
  while (k < n || heap.length > 0) {
    if (heap.length === 0 && k < n && starts[order[k]] > pos) pos = starts[order[k]];
    while (k < n && starts[order[k]] <= pos) push(order[k++]);
    while (heap.length > 0 && ends[heap[0]] < pos) pop();
    if (heap.length === 0) continue;
    const top = heap[0];
    let segEnd: Addr = ends[top];
    if (k < n) {
      const nextStart = starts[order[k]];
      if (nextStart <= segEnd) segEnd = family === 4 ? (nextStart as number) - 1 : (nextStart as bigint) - 1n;
    }
    appendSegment(out, family, pos, segEnd, vals[top]);
    pos = family === 4 ? (segEnd as number) + (one as number) : (segEnd as bigint) + (one as bigint);
  }
  return out;
}

/** Union of all rows' coverage (values ignored; every segment gets `val`). */
export function normalizeUnion(rows: RangeRows, val: number): Segments {
  const out: Segments = { starts: [], ends: [], vals: [] };
  const n = rows.length;
  if (n === 0) return out;
  const { family, starts, ends } = rows;
  const order = sortedOrder(rows);
  let curStart = starts[order[0]];
  let curEnd = ends[order[0]];
  for (let k = 1; k < n; k++) {
    const i = order[k];
    const s = starts[i];
    const touches = family === 4 ? (s as number) <= (curEnd as number) + 1 : (s as bigint) <= (curEnd as bigint) + 1n;
    if (touches) {
      if (ends[i] > curEnd) curEnd = ends[i];
    } else {
      out.starts.push(curStart);
      out.ends.push(curEnd);
      out.vals.push(val);
      curStart = s;
      curEnd = ends[i];
    }
  }
  out.starts.push(curStart);
  out.ends.push(curEnd);
  out.vals.push(val);
  return out;
}
