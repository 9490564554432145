/**
 * IPINTEL_MEMORY_MB: how big a serving worker's memos and caches may grow.
 * The budget is the worker's anonymous memory (heap, caches; the mapped
 * index is file-backed and not in it). A fixed part is the runtime itself;
 * the rest is shared among the memos by the documented shares below
 * (docs/deployment.md, "Memory"), each turned into entries by its cost per
 * entry, or handed over as bytes where entries vary in size (RDAP, radar).
 * Unset, every memo keeps its own default size.
 */
import { MIN_MEMORY_MB } from './config.ts';
import { DNS_CACHE_SIZE } from './crawlers/cache-sizes.ts';
import { RADAR_DEFAULTS } from './lookup/radar-defaults.ts';
import { DEFAULT_MEMO_SIZES, type MemoSizes } from './lookup/memo-sizes.ts';
import { RDAP_DEFAULTS } from './rdap/rdap-defaults.ts';

/**
 * Default bound on rate-limit buckets (memory in tools/bench/ratelimit.bench.ts;
 * docs/rate-limits.md). Declared here, not by the limiter, because the limiter
 * sits above the budget and takes its size from it.
 */
export const DEFAULT_MAX_BUCKETS = 250_000;

/** Sizes of a worker's memos (those of each serving snapshot, src/lookup/serving.ts) and caches. */
export interface MemoryBudget extends MemoSizes {
  /** RDAP answers held, and their JSON text's total size (src/rdap/client.ts). */
  rdapEntries: number;
  rdapBytes: number;
  /** DNS answers held, and crawler proofs held (src/crawlers/verifier.ts, each cache this many). */
  dnsEntries: number;
  /** Radar enrichments held, and their JSON text's total size (src/lookup/radar.ts). */
  radarEntries: number;
  radarBytes: number;
  /** Rate-limit buckets (src/http/ratelimit/). */
  rateLimitBuckets: number;
  /** Bytes the operator's overrides table may hold (src/lookup/overrides/): a file that would need more is refused with the reason. */
  overridesBytes: number;
}

/** What the overrides table may hold when IPINTEL_MEMORY_MB is unset: a million entries with a note of ~60 characters each. */
export const DEFAULT_OVERRIDES_BYTES = 128 * 1048576;

/** Each memo's own default size, used when IPINTEL_MEMORY_MB is unset. */
export const DEFAULT_MEMORY_BUDGET: Readonly<MemoryBudget> = {
  ...DEFAULT_MEMO_SIZES,
  rdapEntries: RDAP_DEFAULTS.cacheSize,
  rdapBytes: RDAP_DEFAULTS.cacheMaxBytes,
  dnsEntries: DNS_CACHE_SIZE,
  radarEntries: RADAR_DEFAULTS.maxEntries,
  radarBytes: RADAR_DEFAULTS.maxBytes,
  rateLimitBuckets: DEFAULT_MAX_BUCKETS,
  overridesBytes: DEFAULT_OVERRIDES_BYTES,
};

export { MIN_MEMORY_MB };

/**
 * What a worker holds whatever the memos: the runtime, the compiled code,
 * the framework, the index's decoded tables, and the garbage a busy worker
 * carries between collections, the most of it (measured under random load by
 * tools/bench/serving-memory.bench.ts; the figures are in BENCHMARKS.md).
 */
export const RUNTIME_MB = 176;

/**
 * Shares of what the runtime leaves, in percent. The v1 body memo is the one
 * that pays for itself on random traffic (each slot spares a record decode
 * and serialization); the others hold little under random traffic and are
 * bounded so a flood of distinct callers, crawlers or ASNs cannot grow them.
 */
export const MEMORY_SHARES = {
  v1Tails: 44,
  scoredViews: 8,
  legacyLines: 8,
  rdap: 12,
  dns: 4,
  radar: 4,
  rateLimit: 12,
  overrides: 8,
} as const;

/**
 * Cost of one entry in bytes, rounded up: a v1 tail is the record's own JSON
 * plus its slot (the difference of RssAnon between memo sizes,
 * tools/bench/serving-memory.bench.ts); a scoring view's text and its
 * pieces; a legacy line; a DNS answer or proof with its key
 * and list links; a rate-limit bucket's key, map entry and typed-array row.
 */
export const ENTRY_BYTES = {
  v1Tail: 1024,
  scoredView: 3000,
  legacyLine: 160,
  rdapEntry: 4096,
  dns: 1024,
  radarEntry: 2048,
  rateLimitBucket: 160,
  /** An override's columns and its interval; its field set's JSON text comes on top, once per distinct set (src/lookup/overrides/table.ts). */
  overrideEntry: 38,
} as const;

/** The largest power of two <= n, at least `min`. */
function powerOfTwoAtMost(n: number, min: number): number {
  return Math.max(min, 2 ** Math.floor(Math.log2(Math.max(1, n))));
}

/** The sizes for a budget in MiB (null: DEFAULT_MEMORY_BUDGET); each never above its default. */
export function memoryBudget(mb: number | null): MemoryBudget {
  if (mb === null) return { ...DEFAULT_MEMORY_BUDGET };
  const spare = Math.max(0, mb - RUNTIME_MB) * 1048576;
  const bytes = (share: number) => (spare * share) / 100;
  const count = (share: number, each: number, min: number, max: number) => Math.max(min, Math.min(max, Math.floor(bytes(share) / each)));
  const d = DEFAULT_MEMORY_BUDGET;
  return {
    v1TailSlots: Math.min(d.v1TailSlots, powerOfTwoAtMost(bytes(MEMORY_SHARES.v1Tails) / ENTRY_BYTES.v1Tail, 1024)),
    scoredViews: count(MEMORY_SHARES.scoredViews, ENTRY_BYTES.scoredView, 256, d.scoredViews),
    legacyLineSlots: Math.min(d.legacyLineSlots, powerOfTwoAtMost(bytes(MEMORY_SHARES.legacyLines) / ENTRY_BYTES.legacyLine, 1024)),
    rdapEntries: count(MEMORY_SHARES.rdap, ENTRY_BYTES.rdapEntry, 64, d.rdapEntries),
    rdapBytes: Math.min(d.rdapBytes, Math.max(256 << 10, Math.floor(bytes(MEMORY_SHARES.rdap)))),
    dnsEntries: count(MEMORY_SHARES.dns / 2, ENTRY_BYTES.dns, 256, d.dnsEntries),
    radarEntries: count(MEMORY_SHARES.radar, ENTRY_BYTES.radarEntry, 64, d.radarEntries),
    radarBytes: Math.min(d.radarBytes, Math.max(256 << 10, Math.floor(bytes(MEMORY_SHARES.radar)))),
    rateLimitBuckets: count(MEMORY_SHARES.rateLimit, ENTRY_BYTES.rateLimitBucket, 1024, d.rateLimitBuckets),
    overridesBytes: Math.min(d.overridesBytes, Math.max(1 << 20, Math.floor(bytes(MEMORY_SHARES.overrides)))),
  };
}
