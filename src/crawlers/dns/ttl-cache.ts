/**
 * A size-bounded LRU map whose entries expire after their own TTL. The
 * clock is passed in so expiry can be tested without sleeping.
 */

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/** LRU cache with per-entry expiry; times are milliseconds from `now()`. */
export class TtlCache<V> {
  private readonly entries = new Map<string, Entry<V>>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError('cache size must be a positive integer');
  }

  /** The live value for a key (refreshing its recency), or undefined. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    // Map keeps insertion order: re-inserting marks the entry most recent.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Stores a value for `ttlMs`; a non-positive TTL stores nothing. */
  set(key: string, value: V, ttlMs: number): void {
    if (!(ttlMs > 0)) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /** Number of entries held (expired ones included until touched). */
  get size(): number {
    return this.entries.size;
  }
}
