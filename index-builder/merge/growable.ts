/** A growable u32 array: typed storage for millions of values without JS array overhead. */
export class GrowableU32 {
  private buf: Uint32Array;
  length = 0;

  constructor(initial = 1 << 16) {
    this.buf = new Uint32Array(initial);
  }

  /** Appends one value. */
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Uint32Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }

  /** The value at i. */
  at(i: number): number {
    return this.buf[i];
  }

  /** A view of the filled part (no copy). */
  view(): Uint32Array {
    return this.buf.subarray(0, this.length);
  }
}
