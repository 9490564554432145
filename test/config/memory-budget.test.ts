/** IPINTEL_MEMORY_MB split among a worker's memos and caches (src/memory-budget.ts). */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { DEFAULT_MEMORY_BUDGET, ENTRY_BYTES, MEMORY_SHARES, MIN_MEMORY_MB, RUNTIME_MB, memoryBudget, type MemoryBudget } from '../../src/memory-budget.ts';

/** The bytes a budget's sizes may take at most, by the documented cost per entry. */
function estimatedBytes(b: MemoryBudget): number {
  return (
    b.v1TailSlots * ENTRY_BYTES.v1Tail +
    b.scoredViews * ENTRY_BYTES.scoredView +
    b.legacyLineSlots * ENTRY_BYTES.legacyLine +
    b.rdapBytes +
    2 * b.dnsEntries * ENTRY_BYTES.dns +
    b.radarBytes +
    b.rateLimitBuckets * ENTRY_BYTES.rateLimitBucket +
    b.overridesBytes
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
