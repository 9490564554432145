/** A growable u32 array: typed storage for millions of values without JS array overhead. */
export class GrowableU32 {
  private buf: Uint32Array;
  length = 0;

  constructor(initial = 1 << 16) {
    this.buf = new Uint32Array(Math.max(initial, 16));
  }

  /** Appends one value. */
  push(v: number): void {
    if (this.length === this.buf.length) this.reserve(this.length + 1);
    this.buf[this.length++] = v;
  }

  /**
   * Room for `total` values. Growth is by half: doubling would leave up to
   * half of a large column (a hundred MB) allocated and unused.
   */
  reserve(total: number): void {
    if (total <= this.buf.length) return;
    const next = new Uint32Array(Math.max(total, Math.ceil(this.buf.length * 1.5)));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
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

  /** The filled part in a buffer of its own size (the spare capacity is let go). */
  trimmed(): Uint32Array {
    return this.length === this.buf.length ? this.buf : this.buf.slice(0, this.length);
  }
}
