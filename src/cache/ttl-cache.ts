/**
 * A size-bounded LRU map whose entries expire after their own TTL. Bounded
 * by entries and, when given a size function, by bytes: the least recently
 * used entries go first. The clock is passed in so expiry can be tested
 * without sleeping.
 */

interface Entry<V> {
  value: V;
  expiresAt: number;
  bytes: number;
}

/** Optional byte bound: an estimate of each entry's retained size, and the most all entries may hold. */
export interface ByteBound<V> {
  maxBytes: number;
  sizeOf(key: string, value: V): number;
}

/** LRU cache with per-entry expiry; times are milliseconds from `now()`. */
export class TtlCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private heldBytes = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number,
    private readonly bound: ByteBound<V> | null = null,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError('cache size must be a positive integer');
    if (bound && !(bound.maxBytes > 0)) throw new RangeError('cache byte bound must be positive');
  }

  /** The live value for a key (refreshing its recency), or undefined. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.remove(key, entry);
      return undefined;
    }
    // Map keeps insertion order: re-inserting marks the entry most recent.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Stores a value for `ttlMs`; a non-positive TTL, or a value larger than the whole byte bound, stores nothing. */
  set(key: string, value: V, ttlMs: number): void {
    const old = this.entries.get(key);
    if (old) this.remove(key, old);
    if (!(ttlMs > 0)) return;
    const bytes = this.bound ? this.bound.sizeOf(key, value) : 0;
    if (this.bound && bytes > this.bound.maxBytes) return;
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs, bytes });
    this.heldBytes += bytes;
    const maxBytes = this.bound?.maxBytes ?? Infinity;
    while (this.entries.size > this.maxEntries || this.heldBytes > maxBytes) {
      const oldest = this.entries.keys().next().value as string;
      this.remove(oldest, this.entries.get(oldest)!);
    }
  }

  /** Number of entries held (expired ones included until touched). */
  get size(): number {
    return this.entries.size;
  }

  /** Estimated bytes held (0 without a byte bound). */
  get bytes(): number {
    return this.heldBytes;
  }

  private remove(key: string, entry: Entry<V>): void {
    this.entries.delete(key);
    this.heldBytes -= entry.bytes;
  }
}
