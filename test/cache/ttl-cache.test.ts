/** TtlCache, the one bounded cache (lru-cache underneath): expiry on the injected clock, and the entry and byte bounds. */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { TtlCache } from '../../src/cache/ttl-cache.ts';

function clockAt(start: number) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe('TtlCache', () => {
  test('an entry is gone at exactly its TTL, also on a clock that starts at 0', () => {
    for (const start of [0, 1_700_000_000_000]) {
      const clock = clockAt(start);
      const cache = new TtlCache<string>(10, clock.now);
      cache.set('a', 'x', 1000);
      clock.advance(999);
      expect({ start, v: cache.get('a') }).toEqual({ start, v: 'x' });
      clock.advance(1);
      expect({ start, v: cache.get('a') }).toEqual({ start, v: undefined });
      expect(cache.size).toBe(0); // an expired entry touched is dropped
    }
  });

  test('a non-positive TTL stores nothing and drops the value held before', () => {
    const clock = clockAt(5);
    const cache = new TtlCache<string>(10, clock.now);
    cache.set('a', 'old', 1000);
    cache.set('a', 'new', 0);
    expect(cache.get('a')).toBeUndefined();
    cache.set('b', 'old', 1000);
    cache.set('b', 'new', -1);
    expect(cache.get('b')).toBeUndefined();
    cache.set('c', 'x', Number.NaN);
    expect(cache.size).toBe(0);
  });

  test('the byte bound drops the least recently used entries; a value larger than the bound is not kept and drops the old one', () => {
    const clock = clockAt(1);
    const cache = new TtlCache<string>(100, clock.now, { maxBytes: 30, sizeOf: (_k, v) => v.length });
    cache.set('a', '0123456789', 1000);
    cache.set('b', '0123456789', 1000);
    expect(cache.bytes).toBe(20);
    expect(cache.get('a')).toBe('0123456789'); // a is now most recent
    cache.set('c', '0123456789ab', 1000);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe('0123456789');
    expect(cache.bytes).toBe(22);
    cache.set('a', 'x'.repeat(31), 1000);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('c')).toBe('0123456789ab');
    expect(cache.bytes).toBe(12);
  });

  test('without a byte bound it holds no bytes; a size that is not a positive integer is refused', () => {
    const cache = new TtlCache<string>(2, () => 1);
    cache.set('a', 'x', 10);
    expect(cache.bytes).toBe(0);
    expect(() => new TtlCache<string>(0, () => 1)).toThrow(RangeError);
    expect(() => new TtlCache<string>(1.5, () => 1)).toThrow(RangeError);
    expect(() => new TtlCache<string>(1, () => 1, { maxBytes: 0, sizeOf: () => 1 })).toThrow(RangeError);
  });
});

test('no lru-cache is made before the first store (a thread makes several caches at start, some never used)', () => {
  const cache = new TtlCache<string>(10_000, () => 0, { maxBytes: 1_000, sizeOf: () => 1 });
  const made = () => (cache as unknown as { store: unknown }).store !== null;
  expect(cache.get('a')).toBeUndefined();
  cache.set('a', 'x', 0); // a non-positive TTL stores nothing
  expect([cache.size, cache.bytes, made()]).toEqual([0, 0, false]);
  cache.set('a', 'x', 10);
  expect([cache.get('a'), cache.size, cache.bytes, made()]).toEqual(['x', 1, 1, true]);
});
