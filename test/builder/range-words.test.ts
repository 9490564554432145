/**
 * Range rows in u32 word columns: normalisation (most specific wins, and
 * union) equals a plain BigInt model of its rule, for both families, with
 * bounds around the word boundaries (2^32, 2^64, 2^96) and the family's last
 * address, where word carries and the end of the space are easy to get wrong.
 */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import type { Family } from '../../src/net/ip.ts';
import { addrAt } from '../../index-builder/merge/addr-words.ts';
import { normalizeMostSpecific, normalizeUnion, RangeRows, type Segments } from '../../index-builder/merge/range-rows.ts';

type Row = { start: bigint; end: bigint; val: number; rank: number };
type Seg = { start: bigint; end: bigint; val: number };

const bits = (family: Family) => (family === 4 ? 32n : 128n);
const points = (family: Family): bigint[] => {
  const top = (1n << bits(family)) - 1n;
  const edges = family === 4 ? [0n, 1n << 16n, 1n << 31n, top] : [0n, 1n << 32n, 1n << 64n, 1n << 96n, 1n << 127n, top];
  const out = new Set<bigint>();
  for (const e of edges) for (const d of [-2n, -1n, 0n, 1n, 2n]) if (e + d >= 0n && e + d <= top) out.add(e + d);
  return [...out].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
};

/** The rule, one elementary interval at a time: the smallest covering range, then the higher rank, then the later row. */
function modelMostSpecific(rows: Row[], family: Family): Seg[] {
  const top = (1n << bits(family)) - 1n;
  const cuts = new Set<bigint>();
  for (const r of rows) {
    cuts.add(r.start);
    if (r.end < top) cuts.add(r.end + 1n);
  }
  const sorted = [...cuts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const out: Seg[] = [];
  for (let k = 0; k < sorted.length; k++) {
    const s = sorted[k];
    const e = k + 1 < sorted.length ? sorted[k + 1] - 1n : top;
    let best = -1;
    rows.forEach((r, i) => {
      if (r.start > s || r.end < s) return;
      if (best < 0) return void (best = i);
      const b = rows[best];
      const sa = r.end - r.start;
      const sb = b.end - b.start;
      if (sa !== sb ? sa < sb : r.rank !== b.rank ? r.rank > b.rank : true) best = i;
    });
    if (best >= 0) push(out, s, e, rows[best].val);
  }
  return out;
}

function modelUnion(rows: Row[], val: number): Seg[] {
  const sorted = [...rows].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const out: Seg[] = [];
  for (const r of sorted) {
    const last = out.at(-1);
    if (last && r.start <= last.end + 1n) {
      if (r.end > last.end) last.end = r.end;
    } else out.push({ start: r.start, end: r.end, val });
  }
  return out;
}

function push(out: Seg[], start: bigint, end: bigint, val: number): void {
  const last = out.at(-1);
  if (last && last.val === val && last.end + 1n === start) last.end = end;
  else out.push({ start, end, val });
}

function asSegs(s: Segments): Seg[] {
  const out: Seg[] = [];
  for (let i = 0; i < s.count; i++) out.push({ start: BigInt(addrAt(s.starts, i, s.w)), end: BigInt(addrAt(s.ends, i, s.w)), val: s.vals[i] });
  return out;
}

function rowsOf(rows: Row[], family: Family): RangeRows {
  const rr = new RangeRows(family);
  for (const r of rows) rr.push(family === 4 ? Number(r.start) : r.start, family === 4 ? Number(r.end) : r.end, r.val);
  return rr;
}

const rowsArb = (family: Family) => {
  const p = points(family);
  const row = fc
    .record({ a: fc.constantFrom(...p), b: fc.constantFrom(...p), val: fc.integer({ min: 1, max: 3 }), rank: fc.integer({ min: 0, max: 2 }) })
    .map(({ a, b, val, rank }) => ({ start: a < b ? a : b, end: a < b ? b : a, val, rank }));
  return fc.array(row, { minLength: 1, maxLength: 10 });
};

for (const family of [4, 6] as Family[]) {
  test(`IPv${family}: most specific wins, as the model says`, () => {
    fc.assert(
      fc.property(rowsArb(family), (rows) => {
        const got = asSegs(normalizeMostSpecific(rowsOf(rows, family), (i) => rows[i].rank));
        expect(got).toEqual(modelMostSpecific(rows, family));
      }),
      { numRuns: 400 },
    );
  }, 60_000);

  test(`IPv${family}: union, as the model says`, () => {
    fc.assert(
      fc.property(rowsArb(family), (rows) => {
        expect(asSegs(normalizeUnion(rowsOf(rows, family), 9))).toEqual(modelUnion(rows, 9));
      }),
      { numRuns: 400 },
    );
  }, 60_000);
}

test('ordered disjoint rows are normalised in place, adjacent equal values merged across a word carry', () => {
  const rows = new RangeRows(6);
  const w64 = 1n << 64n;
  rows.push(0n, w64 - 1n, 1);
  rows.push(w64, w64 + 5n, 1); // adjacent across the carry from word 1 into word 2... of the low half
  rows.push(w64 + 7n, (1n << 128n) - 1n, 2);
  const segs = normalizeMostSpecific(rows);
  expect(asSegs(segs)).toEqual([
    { start: 0n, end: w64 + 5n, val: 1 },
    { start: w64 + 7n, end: (1n << 128n) - 1n, val: 2 },
  ]);
});
