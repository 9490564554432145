/**
 * The one bounded cache of the house (DNS answers, crawler proofs, RDAP and
 * radar answers): lru-cache keeps the entries in recency order and bounds
 * them by count and, given a size function, by bytes (the least recently
 * used go first). This face adds what every caller here needs the same way:
 * each entry's own TTL on a clock passed in (expiry tested without
 * sleeping), and a TTL of zero or less meaning "do not keep" (lru-cache
 * reads 0 as "keep forever").
 */
import { LRUCache } from 'lru-cache';

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/** Optional byte bound: an estimate of each entry's retained size, and the most all entries may hold. */
export interface ByteBound<V> {
  maxBytes: number;
  sizeOf(key: string, value: V): number;
}

/** LRU cache with per-entry expiry; times are milliseconds from `now()`. */
export class TtlCache<V> {
  /** Made on the first store: lru-cache allocates its arrays for every entry up front (~2 ms for 10 000), and a thread makes several caches at start that some never use. */
  private store: LRUCache<string, Entry<V>> | null = null;

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number,
    private readonly bound: ByteBound<V> | null = null,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError('cache size must be a positive integer');
    if (bound && !(bound.maxBytes > 0)) throw new RangeError('cache byte bound must be positive');
  }

  private get entries(): LRUCache<string, Entry<V>> {
    if (this.store !== null) return this.store;
    const bound = this.bound;
    return (this.store = new LRUCache<string, Entry<V>>({
      max: this.maxEntries,
      // An entry larger than the whole bound is not kept (lru-cache's maxEntrySize defaults to maxSize).
      ...(bound && { maxSize: bound.maxBytes, sizeCalculation: (entry: Entry<V>, key: string) => Math.max(1, Math.ceil(bound.sizeOf(key, entry.value))) }),
    }));
  }

  /** The live value for a key (refreshing its recency), or undefined. */
  get(key: string): V | undefined {
    const entry = this.store?.get(key);
    if (!entry) return undefined;
    // Expiry is checked here, not by lru-cache's TTL: an entry is gone at exactly its TTL, on any clock (lru-cache keeps it one tick longer and never expires one set at time 0).
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Stores a value for `ttlMs`; a non-positive TTL, or a value larger than the whole byte bound, stores nothing (and drops the old value). */
  set(key: string, value: V, ttlMs: number): void {
    if (!(ttlMs > 0)) {
      this.store?.delete(key);
      return;
    }
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
  }

  /** Number of entries held (expired ones included until touched). */
  get size(): number {
    return this.store?.size ?? 0;
  }

  /** Estimated bytes held (0 without a byte bound). */
  get bytes(): number {
    return this.store?.calculatedSize || 0; // undefined without a size bound
  }
}
