/** ChunkedSlots behaves as one array of `size` slots: every slot independent, chunk edges included. */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { ChunkedSlots, DirectMappedCache } from '../../src/index/tables.ts';
import { prng } from '../helpers/prng.ts';

test('agrees with a plain array under random writes, reads and clears (sizes on and off chunk edges)', () => {
  const rnd = prng(5);
  for (const size of [1, 63, 64, 65, 100, 4096, 1 << 17]) {
    const slots = new ChunkedSlots<number>(size);
    const model: (number | undefined)[] = new Array(size);
    for (let i = 0; i < 20_000; i++) {
      const slot = Math.floor(rnd() * size);
      if (rnd() < 0.5) {
        slots.set(slot, i);
        model[slot] = i;
      } else expect(slots.get(slot)).toBe(model[slot]);
      if (i === 10_000) {
        slots.clear();
        model.fill(undefined);
      }
    }
    for (let slot = 0; slot < size; slot++) expect(slots.get(slot)).toBe(model[slot]);
    expect(slots.size).toBe(size);
  }
});

test('slots never written read empty, and a write reaches no other instance (they start on one shared empty chunk)', () => {
  const a = new ChunkedSlots<string>(1 << 10);
  const b = new ChunkedSlots<string>(1 << 10);
  a.set(5, 'five');
  a.set(700, 'seven hundred');
  expect([a.get(5), a.get(700), a.get(4), a.get(5 + 64)]).toEqual(['five', 'seven hundred', undefined, undefined]);
  expect([b.get(5), b.get(700), new ChunkedSlots<string>(64).get(5)]).toEqual([undefined, undefined, undefined]);
  a.clear();
  expect(a.get(5)).toBeUndefined();
  a.set(6, 'six');
  expect([a.get(6), a.get(5), b.get(6)]).toEqual(['six', undefined, undefined]);
});

test('DirectMappedCache over chunked slots: a hit returns the cached value, a colliding id replaces it', () => {
  const cache = new DirectMappedCache<string>(8);
  let computed = 0;
  const compute = (id: number) => {
    computed++;
    return `row ${id}`;
  };
  for (const id of [3, 70, 255, 3, 70, 255]) expect(cache.get(id, compute)).toBe(`row ${id}`);
  expect(computed).toBe(3);
  expect(cache.get(3 + 256, compute)).toBe('row 259'); // same slot as 3
  expect(cache.get(3, compute)).toBe('row 3');
  expect(computed).toBe(5);
});
