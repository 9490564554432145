/** IPINTEL_MEMORY_MB split among a worker's memos and caches (src/memory-budget.ts). */
import { describe, expect, test } from 'bun:test';
import { DEFAULT_MEMORY_BUDGET, ENTRY_BYTES, MEMORY_SHARES, MIN_MEMORY_MB, RUNTIME_MB, memoryBudget, type MemoryBudget } from '../../src/memory-budget.ts';
import { createRadarClient } from '../../src/lookup/radar.ts';

/** The bytes a budget's sizes may take at most, by the documented cost per entry. */
function estimatedBytes(b: MemoryBudget): number {
  return (
    b.v1TailSlots * ENTRY_BYTES.v1Tail +
    b.scoredViews * ENTRY_BYTES.scoredView +
    b.legacyLineSlots * ENTRY_BYTES.legacyLine +
    b.rdapBytes +
    2 * b.dnsEntries * ENTRY_BYTES.dns +
    b.radarBytes +
    b.rateLimitBuckets * ENTRY_BYTES.rateLimitBucket
  );
}

describe('memoryBudget', () => {
  test('unset: every memo keeps its default size', () => {
    expect(memoryBudget(null)).toEqual({ ...DEFAULT_MEMORY_BUDGET });
  });

  test('the shares add up to the whole of what the runtime leaves', () => {
    expect(Object.values(MEMORY_SHARES).reduce((a, b) => a + b, 0)).toBe(100);
  });

  test('a budget fits: runtime plus the memos at their cost per entry stay within it, and no memo exceeds its default', () => {
    for (const mb of [MIN_MEMORY_MB, 192, 256, 384, 512]) {
      const b = memoryBudget(mb);
      expect(RUNTIME_MB * 1048576 + estimatedBytes(b)).toBeLessThanOrEqual(mb * 1048576);
      for (const key of Object.keys(DEFAULT_MEMORY_BUDGET) as (keyof MemoryBudget)[]) expect(b[key]).toBeLessThanOrEqual(DEFAULT_MEMORY_BUDGET[key]);
      expect(Number.isInteger(Math.log2(b.v1TailSlots))).toBe(true);
      expect(Number.isInteger(Math.log2(b.legacyLineSlots))).toBe(true);
    }
  });

  test('more memory never means smaller memos; a large budget reaches the defaults', () => {
    let last = memoryBudget(MIN_MEMORY_MB);
    for (let mb = MIN_MEMORY_MB + 32; mb <= 4096; mb += 32) {
      const b = memoryBudget(mb);
      for (const key of Object.keys(b) as (keyof MemoryBudget)[]) expect(b[key]).toBeGreaterThanOrEqual(last[key]);
      last = b;
    }
    expect(memoryBudget(1 << 16)).toEqual({ ...DEFAULT_MEMORY_BUDGET });
  });

  test('256 MiB: the v1 body memo is the largest share and smaller than today', () => {
    const b = memoryBudget(256);
    expect(b.v1TailSlots).toBeLessThan(DEFAULT_MEMORY_BUDGET.v1TailSlots);
    expect(b.v1TailSlots * ENTRY_BYTES.v1Tail).toBeGreaterThan(b.rdapBytes);
  });
});

describe('the radar cache is bounded by bytes', () => {
  /** A radar client over a counting fake endpoint answering `size`-character bodies per ASN. */
  function client(sizes: Record<number, number>, maxBytes: number) {
    const asked: number[] = [];
    const radar = createRadarClient({
      url: 'http://radar.invalid/{asn}',
      token: null,
      maxBytes,
      fetch: (async (url: string) => {
        const asn = Number(String(url).split('/').pop());
        asked.push(asn);
        return new Response(JSON.stringify({ result: { pad: 'x'.repeat(sizes[asn] - 20) } }));
      }) as unknown as typeof fetch,
    });
    return { radar, asked };
  }

  test('an answer over a sixteenth of the cache is refused: null, remembered briefly as a failure', async () => {
    const { radar, asked } = client({ 1: 2000, 2: 500 }, 16 * 1024);
    expect(await radar.lookup(1)).toBeNull();
    expect(await radar.lookup(1)).toBeNull();
    expect(asked).toEqual([1]);
    expect(await radar.lookup(2)).toEqual({ pad: 'x'.repeat(480) });
  });

  test('answers are kept until their text would pass the budget, then the cache starts over', async () => {
    const sizes: Record<number, number> = {};
    for (let asn = 1; asn <= 18; asn++) sizes[asn] = 900;
    // 16 000 bytes: 17 answers of ~900 fit, the 18th passes the budget.
    const { radar, asked } = client(sizes, 16_000);
    for (let asn = 1; asn <= 17; asn++) expect(await radar.lookup(asn)).not.toBeNull();
    await radar.lookup(1);
    expect(asked.length).toBe(17); // every one held
    await radar.lookup(18);
    await radar.lookup(1);
    expect(asked.slice(-2)).toEqual([18, 1]); // the cache started over at the 18th
  });
});
