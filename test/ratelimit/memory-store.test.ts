import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { MemoryBuckets, SWEEP_INTERVAL_MS } from '../../src/http/ratelimit/memory-store.ts';
import { WINDOW_MS } from '../../src/http/ratelimit/gcra.ts';
import { limiterMetrics } from '../../src/http/ratelimit/limiter-metrics.ts';

const T0 = Date.UTC(2026, 0, 1);

test('1M distinct callers never grow the map past its bound, and a steady caller keeps its bucket', () => {
  const max = 50_000;
  const buckets = new MemoryBuckets(max);
  const evictedBefore = limiterMetrics.evictedActiveBuckets;
  let now = T0;
  let peak = 0;
  // A steady caller drains its bucket first, then sends one request per 1000 flood requests.
  for (let i = 0; i < 60; i++) buckets.consume('key:steady', 'anonymous', now);
  let steadyRefusals = 0;
  let steadyRequests = 0;
  for (let i = 0; i < 1_000_000; i++) {
    // Distinct IPv4 addresses, 1M of them within 10 s: none of their buckets is full again yet.
    buckets.consume(`ip:10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`, 'anonymous', now);
    if (i % 1000 === 0) {
      steadyRequests++;
      if (!buckets.consume('key:steady', 'anonymous', now).allowed) steadyRefusals++;
    }
    if (buckets.size > peak) peak = buckets.size;
    if (i % 100 === 0) now += 1;
  }
  expect(peak).toBe(max);
  expect(buckets.size).toBe(max);
  // Every flood bucket dropped was still draining: counted as an active eviction.
  expect(limiterMetrics.evictedActiveBuckets - evictedBefore).toBe(1_000_000 + 1 - max);
  // The steady caller was seen every 1000 inserts (< max), so its bucket was never dropped:
  // its last request came 9.99 s in, by when it had regained 9 tokens: all but 9 were refused.
  expect(steadyRequests).toBe(1000);
  expect(steadyRefusals).toBe(steadyRequests - 9);
});

test('buckets idle for a whole window are swept without any request to them', () => {
  const buckets = new MemoryBuckets(1_000_000);
  for (let i = 0; i < 10_000; i++) buckets.consume(`ip:idle-${i}`, 'free', T0);
  expect(buckets.size).toBe(10_000);
  // Another caller comes a window (plus a sweep interval) later: the idle ones are gone.
  buckets.consume('ip:late', 'free', T0 + WINDOW_MS + SWEEP_INTERVAL_MS);
  expect(buckets.size).toBe(1);
});

test('the sweep keeps a bucket that is still draining, even behind full ones', () => {
  const buckets = new MemoryBuckets(100);
  buckets.consume('a', 'anonymous', T0);
  for (let i = 0; i < 60; i++) buckets.consume('busy', 'anonymous', T0 + 1);
  // 'a' is full after 1 s; 'busy' needs 60 s.
  expect(buckets.sweepIdle(T0 + 2000)).toBe(1);
  expect(buckets.peek('a')).toBeUndefined();
  expect(buckets.peek('busy')).toBe(T0 + 1 + WINDOW_MS);
});

test('at the bound, full buckets are dropped before draining ones', () => {
  const buckets = new MemoryBuckets(3);
  const evictedBefore = limiterMetrics.evictedActiveBuckets;
  for (let i = 0; i < 60; i++) buckets.consume('drained', 'anonymous', T0);
  buckets.consume('one', 'pro', T0); // full again after 100 ms
  buckets.consume('two', 'pro', T0);
  // 'drained' is least recently used, but 'one' and 'two' are full by now: the sweep frees them instead.
  buckets.consume('three', 'pro', T0 + 1000);
  expect(buckets.peek('drained')).toBe(T0 + WINDOW_MS);
  expect(buckets.size).toBeLessThanOrEqual(3);
  expect(limiterMetrics.evictedActiveBuckets - evictedBefore).toBe(0);
});

test('a refused request refreshes its bucket in LRU order', () => {
  const buckets = new MemoryBuckets(2);
  for (let i = 0; i < 61; i++) buckets.consume('hammer', 'anonymous', T0); // last one refused, but touched
  buckets.consume('x', 'anonymous', T0);
  buckets.consume('hammer', 'anonymous', T0); // refused; now most recent
  buckets.consume('y', 'anonymous', T0); // at the bound: drops 'x', not 'hammer'
  expect(buckets.peek('hammer')).toBe(T0 + WINDOW_MS);
  expect(buckets.peek('x')).toBeUndefined();
});

test('a non-positive bound is refused', () => {
  expect(() => new MemoryBuckets(0)).toThrow();
});

test('IPv4 callers as numbers: the same decisions as their text keys, bounded by maxBuckets, and a flood cannot refuse anyone', () => {
  const numeric = new MemoryBuckets(4096);
  const text = new MemoryBuckets(4096);
  let now = T0;
  for (let i = 0; i < 20_000; i++) {
    now += i % 7;
    const v4 = (0xc0000200 + (i % 40)) | 0; // 192.0.2.0–39, past 2^31 as int32
    expect(numeric.consume(v4, 'anonymous', now)).toEqual(text.consume(`ip:192.0.2.${i % 40}`, 'anonymous', now));
  }
  const flood = new MemoryBuckets(1000);
  for (let i = 0; i < 100_000; i++) expect(flood.consume((0x0a000000 + i) | 0, 'anonymous', T0).allowed).toBe(true);
  expect(flood.size).toBeLessThanOrEqual(1024); // the table rounds its slots up to whole groups
  flood.consume('key:k1', 'pro', T0);
  expect(flood.size).toBeLessThanOrEqual(1025);
});

test('slots made as buckets are first handed out keep every bucket and the LRU order across the arrays growing', () => {
  const max = 3_000; // past the first 1 024 slots: the arrays double twice, the last time to the bound
  const buckets = new MemoryBuckets(max);
  const now = T0;
  for (let i = 0; i < max; i++) buckets.consume(`key:${i}`, 'anonymous', now);
  const tats = Array.from({ length: max }, (_, i) => buckets.peek(`key:${i}`));
  expect(tats.every((t) => t !== undefined && t > now)).toBe(true); // all draining
  // Touch the first one so it is the most recent: the next new bucket drops key:1, the least recent.
  buckets.consume('key:0', 'anonymous', now);
  buckets.consume('key:new', 'anonymous', now);
  expect(buckets.size).toBe(max);
  expect(buckets.peek('key:1')).toBeUndefined();
  expect(buckets.peek('key:0')).toBeGreaterThan(tats[0]!);
  for (let i = 2; i < max; i++) expect(buckets.peek(`key:${i}`)).toBe(tats[i]);
});
