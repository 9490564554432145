/** RecordMemo: 4-way sets, frequency admission, aging; and that it beats a direct-mapped memo of the same size. */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { FrequencySketch, MEMO_WAYS, RecordMemo } from '../../src/lookup/record-memo.ts';
import { prng } from '../helpers/prng.ts';

/** Value 0 held for `id`, if any. */
function get<V>(memo: RecordMemo<V>, id: number): V | undefined {
  const at = memo.find(id);
  return at < 0 ? undefined : memo.value(at, 0);
}

/** Holds `value` as value 0 for `id` if admitted; whether it is now held. */
function offer<V>(memo: RecordMemo<V>, id: number, value: V): boolean {
  const at = memo.admit(id, 0);
  if (at >= 0) memo.set(at, 0, value);
  return at >= 0;
}

/** Ids that share a set in a memo of `slots` slots (same residue modulo the number of sets). */
const sameSet = (slots: number, n: number) => Array.from({ length: n }, (_, i) => 3 + i * (slots / MEMO_WAYS));

test('refuses a size that is not a power of two of at least one set, and a width that is not a power of two up to 64', () => {
  for (const bad of [0, 2, 3, 6, 100, 1.5]) expect(() => new RecordMemo(bad)).toThrow(RangeError);
  for (const bad of [0, 3, 128, 0.5]) expect(() => new RecordMemo(64, bad)).toThrow(RangeError);
  expect(new RecordMemo(4).slots).toBe(4);
  expect(new RecordMemo(4, 64).width).toBe(64);
});

test('a slot holds its width of values and a stamp; neighbouring slots never share a value', () => {
  const memo = new RecordMemo<string>(64, 4);
  const ids = [...sameSet(64, MEMO_WAYS), 4, 5];
  const slots = ids.map((id) => memo.admit(id, id * 10));
  expect(new Set(slots).size).toBe(ids.length);
  ids.forEach((id, i) => {
    for (let k = 0; k < 4; k++) memo.set(slots[i], k, `${id}:${k}`);
  });
  ids.forEach((id, i) => {
    expect(memo.find(id)).toBe(slots[i]);
    expect(memo.stamp(slots[i])).toBe(id * 10);
    for (let k = 0; k < 4; k++) expect(memo.value(slots[i], k)).toBe(`${id}:${k}`);
  });
  // Admitting a held id again keeps its slot and takes the new stamp (a stale body is restamped when remade).
  expect(memo.admit(ids[1], -1)).toBe(slots[1]);
  expect(memo.stamp(slots[1])).toBe(-1);
  expect(memo.find(999)).toBe(-1);
});

test('a free slot of the set takes any id; a held id is replaced in place; clear forgets values', () => {
  const memo = new RecordMemo<string>(64);
  const ids = sameSet(64, MEMO_WAYS);
  for (const id of ids) expect(offer(memo, id, `v${id}`)).toBe(true);
  for (const id of ids) expect(get(memo, id)).toBe(`v${id}`);
  // Never asked, yet its own slot takes the new value (a stale body must be replaceable).
  expect(offer(memo, ids[2], 'new')).toBe(true);
  expect(get(memo, ids[2])).toBe('new');
  expect(get(memo, ids[0] + 1)).toBeUndefined();
  memo.clear();
  for (const id of ids) expect(get(memo, id)).toBeUndefined();
});

test('a full set admits a newcomer only if it was asked more than the least asked member, and evicts that one', () => {
  const memo = new RecordMemo<string>(64);
  const [a, b, c, d, e] = sameSet(64, MEMO_WAYS + 1);
  const ask = (id: number, times: number) => {
    for (let i = 0; i < times; i++) memo.touch(id);
  };
  ask(a, 5);
  ask(b, 2);
  ask(c, 7);
  ask(d, 4);
  for (const id of [a, b, c, d]) offer(memo, id, `v${id}`);
  ask(e, 2); // as often as b, the least asked: not enough
  expect(offer(memo, e, 've')).toBe(false);
  expect(get(memo, e)).toBeUndefined();
  ask(e, 1);
  expect(offer(memo, e, 've')).toBe(true);
  expect(get(memo, e)).toBe('ve');
  expect(get(memo, b)).toBeUndefined();
  for (const id of [a, c, d]) expect(get(memo, id)).toBe(`v${id}`);
});

test('one-off lookups do not push out records that keep coming back', () => {
  const slots = 1 << 10;
  const memo = new RecordMemo<number>(slots);
  const hot = Array.from({ length: slots / 2 }, (_, i) => i * 7);
  const ask = (id: number) => {
    memo.touch(id);
    if (get(memo, id) === undefined) offer(memo, id, id);
  };
  for (let round = 0; round < 3; round++) hot.forEach(ask);
  // Three new ids for every hot one asked again, over two aging periods (the hot ones still come back).
  let next = 1_000_000;
  for (let i = 0; i < 20 * slots; i++) ask(i % 4 === 0 ? hot[(i / 4) % hot.length] : next++);
  const kept = hot.filter((id) => get(memo, id) === id).length;
  expect(kept).toBe(hot.length);
});

test('counters saturate at 255 and halve together, byte by byte, after the aging period', () => {
  const sketch = new FrequencySketch(1_000);
  for (let i = 0; i < 300; i++) sketch.add(42);
  expect(sketch.frequency(42)).toBe(255);
  sketch.add(43);
  expect(sketch.frequency(43)).toBe(1);
  sketch.halve();
  expect(sketch.frequency(42)).toBe(127);
  expect(sketch.frequency(43)).toBe(0);
  // 301 adds so far, then the halving reset the period: 1 000 more adds trigger the next one.
  for (let i = 0; i < 999; i++) sketch.add(7 + (i % 3) * 1_000_003);
  expect(sketch.frequency(42)).toBe(127);
  sketch.add(99);
  expect(sketch.frequency(42)).toBe(63);
});

test('frequencies of ids sharing a counter word stay independent when halved', () => {
  const sketch = new FrequencySketch(1 << 30);
  const counts = new Map<number, number>();
  const rnd = prng(11);
  for (let i = 0; i < 50_000; i++) {
    const id = Math.floor(rnd() * 4_000);
    sketch.add(id);
  }
  for (let id = 0; id < 4_000; id++) counts.set(id, sketch.frequency(id));
  sketch.halve();
  for (const [id, f] of counts) expect(sketch.frequency(id)).toBe(f >>> 1);
});

test('on traffic weighted like address space (a few big records, many small) it hits more often than a direct-mapped memo', () => {
  // Record weights follow a heavy tail, as interval sizes of a real index do.
  const rnd = prng(3);
  const n = 60_000;
  const weights = Array.from({ length: n }, () => 2 ** Math.floor(rnd() * 12));
  const cdf: number[] = [];
  let acc = 0;
  for (const w of weights) cdf.push((acc += w));
  const draw = () => {
    const x = rnd() * acc;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid] <= x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const slots = 1 << 13;
  const memo = new RecordMemo<number>(slots);
  const direct = new Int32Array(slots).fill(-1);
  let memoHits = 0;
  let directHits = 0;
  const requests = 400_000;
  for (let i = 0; i < requests; i++) {
    const id = draw();
    memo.touch(id);
    if (get(memo, id) === id) memoHits++;
    else offer(memo, id, id);
    if (direct[id & (slots - 1)] === id) directHits++;
    else direct[id & (slots - 1)] = id;
  }
  // With this seed: 0.585 against 0.416.
  expect(memoHits / requests).toBeGreaterThan(directHits / requests + 0.08);
});
