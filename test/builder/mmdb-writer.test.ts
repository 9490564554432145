/**
 * The MMDB writer's parts against the project's independent MMDB reader
 * (index-builder/mmdb/decoder.ts, tree.ts): every value type and size
 * encoding round-trips, repeated values become pointers, and the search tree
 * holds exactly the ranges it was given (random layouts, both families, the
 * IPv4 aliases).
 */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { MmdbDecoder } from '../../index-builder/mmdb/decoder.ts';
import { MmdbDataWriter, MmdbUint, type MmdbInput } from '../../index-builder/mmdb/encoder.ts';
import { buildSearchTree, NO_DATA, type Ranges } from '../../index-builder/mmdb/search-tree.ts';
import { walkNetworks, type MmdbDatabase } from '../../index-builder/mmdb/tree.ts';
import { prng } from '../helpers/prng.ts';

test('every type and size encoding round-trips through the decoder', () => {
  const w = new MmdbDataWriter();
  const values: Array<[MmdbInput, unknown]> = [
    ['', ''],
    ['é ünïcode ✓', 'é ünïcode ✓'],
    ['x'.repeat(28), 'x'.repeat(28)],
    ['y'.repeat(29), 'y'.repeat(29)],
    ['z'.repeat(300), 'z'.repeat(300)],
    ['w'.repeat(70_000), 'w'.repeat(70_000)],
    [51.5142, 51.5142],
    [-0.0931, -0.0931],
    [0, 0],
    [true, true],
    [false, false],
    [new MmdbUint(0, 32), 0],
    [new MmdbUint(4_294_967_295, 32), 4_294_967_295],
    [new MmdbUint(443, 16), 443],
    [new MmdbUint(1_793_491_200n, 64), 1_793_491_200],
    [new MmdbUint(2n ** 63n + 5n, 64), 2n ** 63n + 5n],
    [Array.from({ length: 40 }, (_, i) => `item ${i}`), Array.from({ length: 40 }, (_, i) => `item ${i}`)],
    [{ a: { b: [1.5, 'c', { d: false }] }, e: new MmdbUint(7, 32) }, { a: { b: [1.5, 'c', { d: false }] }, e: 7 }],
  ];
  const offsets = values.map(([v]) => w.write(v));
  const dec = new MmdbDecoder(w.bytes().slice(), 0);
  offsets.forEach((at, i) => expect(dec.decode(at)).toEqual(values[i][1] as never));
  expect(() => w.write(new MmdbUint(2 ** 32, 32))).toThrow();
});

test('a value written twice is stored once; a repeated inner map or string becomes a pointer', () => {
  const w = new MmdbDataWriter();
  const country = { iso_code: 'GB', names: { en: 'United Kingdom' } };
  const a = w.write({ country, city: { names: { en: 'London' } } });
  const afterFirst = w.size;
  expect(w.write({ country, city: { names: { en: 'London' } } })).toBe(a);
  expect(w.size).toBe(afterFirst);
  const b = w.write({ country, city: { names: { en: 'Leeds' } } });
  // The second record holds pointers to the country map and the key strings: far smaller than the first.
  expect(w.size - afterFirst).toBeLessThan(afterFirst - 10);
  const dec = new MmdbDecoder(w.bytes().slice(), 0);
  expect(dec.decode(b)).toEqual({ country, city: { names: { en: 'Leeds' } } });
  // A double and an unsigned integer of the same value are different values.
  const d = w.write({ n: 5 });
  const u = w.write({ n: new MmdbUint(5, 32) });
  expect(d).not.toBe(u);
  // The metadata writer never points (its offsets would be relative to another section).
  const meta = new MmdbDataWriter(false);
  meta.write({ k: 'same text' });
  const before = meta.size;
  meta.write({ k: 'same text' });
  expect(meta.size).toBe(before * 2);
});

/** Walks a built tree with the project's reader and returns [family, start, end, data] ranges. */
function walk(v4: Ranges, v6: Ranges): Array<[number, bigint, bigint, number]> {
  const tree = buildSearchTree(v4, v6, 1000);
  const buf = new Uint8Array(tree.bytes.length + 16 + 1000);
  buf.set(tree.bytes);
  const db: MmdbDatabase = { buf, metadata: { nodeCount: tree.nodeCount, recordSize: tree.recordSize, ipVersion: 6, databaseType: 't' }, decoder: new MmdbDecoder(buf, 0), dataSize: 1000 };
  const out: Array<[number, bigint, bigint, number]> = [];
  walkNetworks(db, (family, start, end, off) => out.push([family, BigInt(start), BigInt(end), off]));
  return out;
}

/** The ranges with data, merged as a walk reports them. */
function expectedRanges(starts: bigint[], data: number[], top: bigint): Array<[bigint, bigint, number]> {
  const out: Array<[bigint, bigint, number]> = [];
  for (let i = 0; i < starts.length; i++) {
    const end = i + 1 < starts.length ? starts[i + 1] - 1n : top;
    if (data[i] === NO_DATA) continue;
    const last = out[out.length - 1];
    if (last && last[2] === data[i] && last[1] + 1n === starts[i]) last[1] = end;
    else out.push([starts[i], end, data[i]]);
  }
  return out;
}

const words = (x: bigint) => [Number((x >> 96n) & 0xffffffffn), Number((x >> 64n) & 0xffffffffn), Number((x >> 32n) & 0xffffffffn), Number(x & 0xffffffffn)];

test('the tree holds exactly the ranges given, for random layouts of both families', () => {
  const rnd = prng(1);
  for (let round = 0; round < 30; round++) {
    const n4 = 1 + Math.floor(rnd() * 40);
    const s4 = [0n, ...Array.from({ length: n4 }, () => BigInt(Math.floor(rnd() * 2 ** 32)))].sort((a, b) => (a < b ? -1 : 1)).filter((x, i, a) => i === 0 || x !== a[i - 1]);
    const d4 = s4.map(() => (rnd() < 0.3 ? NO_DATA : Math.floor(rnd() * 4) * 7));
    // IPv6 starts avoid ::/96 and ::ffff:0:0/96, which hold the IPv4 space in an MMDB.
    const n6 = 1 + Math.floor(rnd() * 40);
    const big = () => (BigInt(Math.floor(rnd() * 2 ** 32)) << 96n) | (BigInt(Math.floor(rnd() * 2 ** 32)) << 64n) | BigInt(Math.floor(rnd() * 2 ** 32));
    const s6 = [0n, 1n << 96n, ...Array.from({ length: n6 }, big).filter((x) => x >= 1n << 96n)].sort((a, b) => (a < b ? -1 : 1)).filter((x, i, a) => i === 0 || x !== a[i - 1]);
    const d6 = s6.map((_, i) => (i === 0 ? NO_DATA : rnd() < 0.3 ? NO_DATA : 100 + Math.floor(rnd() * 4) * 7));
    const got = walk({ starts: s4.map(Number), data: d4 }, { starts: s6.flatMap(words), data: d6 });
    expect(got.filter((r) => r[0] === 4).map((r) => r.slice(1))).toEqual(expectedRanges(s4, d4, 2n ** 32n - 1n));
    // The walker skips the alias ::ffff:0:0/96 (it points at the IPv4 subtree); the rest is what was given.
    const want6 = expectedRanges(s6, d6, 2n ** 128n - 1n).flatMap(([s, e, d]) => {
      const a = 0xffffn << 32n, b = (0xffffn << 32n) + 2n ** 32n - 1n;
      if (e < a || s > b) return [[s, e, d]];
      const parts: Array<[bigint, bigint, number]> = [];
      if (s < a) parts.push([s, a - 1n, d]);
      if (e > b) parts.push([b + 1n, e, d]);
      return parts;
    });
    expect(got.filter((r) => r[0] === 6).map((r) => r.slice(1))).toEqual(want6);
  }
});

test('the whole space in one range still has a root node; IPv4 in one range is a leaf at ::/96', () => {
  const got = walk({ starts: [0], data: [7] }, { starts: [0, 0, 0, 0], data: [14] });
  // A leaf at ::/96 is no IPv4 root node, so the walker reports it as the IPv6 block ::/96 (readers answer IPv4 from it).
  const v4Space = got.filter((r) => r[3] === 7).map((r) => [r[0], r[1], r[2]]);
  expect(v4Space).toEqual([[6, 0n, 2n ** 32n - 1n], [6, 0xffffn << 32n, (0xffffn << 32n) + 2n ** 32n - 1n]]);
  expect(got.every((r) => r[0] === 6 && (r[3] === 7 || r[3] === 14))).toBe(true);
  expect(got.at(-1)).toEqual([6, 1n << 48n, 2n ** 128n - 1n, 14]);
});
