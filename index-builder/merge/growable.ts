/** Address space a column may grow to (reserved, not committed). */
const MAX_BYTES = 2 ** 31;

/**
 * A growable u32 array: typed storage for millions of values without JS
 * array overhead. It grows in place inside a resizable buffer: a copying
 * array would leave each outgrown buffer to the garbage collector, which
 * frees them late, so the peak is several times the array (BENCHMARKS.md,
 * index build).
 */
export class GrowableU32 {
  private readonly store: ArrayBuffer;
  private buf: Uint32Array;
  length = 0;

  constructor(initial = 1 << 16) {
    const words = Math.max(initial, 16);
    this.store = new ArrayBuffer(words * 4, { maxByteLength: MAX_BYTES });
    this.buf = new Uint32Array(this.store, 0, words);
  }

  /** Appends one value. */
  push(v: number): void {
    if (this.length === this.buf.length) this.reserve(this.length + 1);
    this.buf[this.length++] = v;
  }

  /**
   * Room for `total` values. Growth is by half; pages are committed as they are written.
   */
  reserve(total: number): void {
    if (total <= this.buf.length) return;
    if (total * 4 > MAX_BYTES) throw new RangeError(`a column of ${total} values exceeds ${MAX_BYTES} bytes`);
    const words = Math.min(MAX_BYTES / 4, Math.max(total, Math.ceil(this.buf.length * 1.5)));
    this.store.resize(words * 4);
    this.buf = new Uint32Array(this.store, 0, words);
  }

  /** The value at i. */
  at(i: number): number {
    return this.buf[i];
  }

  /** Overwrites the value at i (< length). */
  set(i: number, v: number): void {
    this.buf[i] = v;
  }

  /** Drops the values from n on. */
  truncate(n: number): void {
    if (n < this.length) this.length = n;
  }

  /** The whole buffer, filled part first (no copy; valid until the next push): for hot loops that must not allocate a view. */
  raw(): Uint32Array {
    return this.buf;
  }

  /** A view of the filled part (no copy; valid until the next push). */
  view(): Uint32Array {
    return this.buf.subarray(0, this.length);
  }
}
