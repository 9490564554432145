/**
 * The IPv6 search over a mapped index (FORMAT.md, "The IPv6 /32 hash and
 * nodes"): the /32's hash slot, one node entry (a record id, or the interval
 * to scan forward from), and a first-level-narrowed search for /32s without
 * interval starts. Every step is a cache miss on random traffic, so the
 * searches issue their independent reads together (a few probes per round
 * rather than one dependent probe per halving) and the node widths are kept
 * beside the hash, saving the read of each node's header.
 */
import { V6_DIRECT_RECORD, V6_HASH_MULTIPLIER } from './format.ts';

/** Searches the IPv6 interval sections of one mapped index. */
export class V6Search {
  private readonly hashShift: number;
  private readonly hashMask: number;
  private readonly l1Shift: number;
  /**
   * Bits `s` of the node each hash slot leads to, 0 until first read: the
   * node's header is otherwise one more dependent miss before its entry.
   * Filled on use (2^h bytes, 256 KiB for the default index's 2^18 slots),
   * so opening an index reads nothing more.
   */
  private readonly nodeBits: Uint8Array;

  constructor(
    /** V6ST: four words per interval start. */
    readonly starts: Uint32Array,
    /** V6RC: record id per interval. */
    readonly recs: Uint32Array,
    private readonly l1: Uint32Array,
    l1Bits: number,
    private readonly hash: Uint32Array,
    hashBits: number,
    private readonly nodes: Uint32Array,
  ) {
    this.hashShift = 32 - hashBits;
    this.hashMask = 2 ** hashBits - 1;
    this.l1Shift = 32 - l1Bits;
    this.nodeBits = new Uint8Array(2 ** hashBits);
  }

  /** Record id of an address given as four u32 words (most significant first). */
  recordId(w0: number, w1: number, w2: number, w3: number): number {
    const hash = this.hash;
    let h = Math.imul(w0, V6_HASH_MULTIPLIER) >>> this.hashShift;
    let node = 0;
    for (;;) {
      const v = hash[2 * h + 1];
      // No interval starts in this /32: it lies in the interval holding its first address.
      if (v === 0) return this.recs[this.find(w0, w1, w2, w3)];
      if (hash[2 * h] === w0) {
        node = v - 1;
        break;
      }
      h = (h + 1) & this.hashMask;
    }
    const nodes = this.nodes;
    let s = this.nodeBits[h];
    if (s === 0) s = this.nodeBits[h] = nodes[node];
    const part = w1 >>> (32 - s);
    const e = nodes[node + 1 + part];
    if (e >= V6_DIRECT_RECORD) return e - V6_DIRECT_RECORD;
    // The next part's entry (usually the same line): when it names an
    // interval, the address's interval is at most that one, so the scan is
    // a bounded search rather than a gallop.
    const next = part + 1 < 2 ** s ? nodes[node + 2 + part] : V6_DIRECT_RECORD;
    return this.scanRecord(e, next < V6_DIRECT_RECORD ? next : -1, w0, w1, w2, w3);
  }

  /** Interval index of an address (first-level table, then the search). */
  find(w0: number, w1: number, w2: number, w3: number): number {
    const top = w0 >>> this.l1Shift;
    return this.lastAtOrBelow(this.l1[top], this.l1[top + 1], w0, w1, w2, w3);
  }

  /**
   * Record id of the last interval at or after `from` (and at most `bound`,
   * when >= 0) whose start is <= the address. Half the scans end at `from`
   * or the next interval, so those two record ids and the next starts are
   * read together with the first test.
   */
  private scanRecord(from: number, bound: number, w0: number, w1: number, w2: number, w3: number): number {
    const recs = this.recs;
    const last = recs.length - 1;
    const r0 = recs[from];
    if (from === last) return r0;
    const r1 = recs[from + 1];
    if (!this.startLE(from + 1, w0, w1, w2, w3)) return r0;
    if (from + 1 === last || !this.startLE(from + 2, w0, w1, w2, w3)) return r1;
    if (bound >= 0) return recs[this.lastAtOrBelow(from + 2, bound, w0, w1, w2, w3)];
    // Gallop: probes at from+4, +8, +16, ... four at a time, then the search in the last gap.
    let lo = from + 2;
    let step = 2;
    for (;;) {
      const a = Math.min(lo + step, last);
      const b = Math.min(lo + 2 * step, last);
      const c = Math.min(lo + 4 * step, last);
      const d = Math.min(lo + 8 * step, last);
      const s = this.starts;
      // Independent reads of the four probes' first words, issued at once.
      const a0 = s[4 * a];
      const b0 = s[4 * b];
      const c0 = s[4 * c];
      const d0 = s[4 * d];
      if (!this.probeLE(a0, a, w0, w1, w2, w3)) return recs[this.lastAtOrBelow(lo, a - 1, w0, w1, w2, w3)];
      if (!this.probeLE(b0, b, w0, w1, w2, w3)) return recs[this.lastAtOrBelow(a, b - 1, w0, w1, w2, w3)];
      if (!this.probeLE(c0, c, w0, w1, w2, w3)) return recs[this.lastAtOrBelow(b, c - 1, w0, w1, w2, w3)];
      if (!this.probeLE(d0, d, w0, w1, w2, w3)) return recs[this.lastAtOrBelow(c, d - 1, w0, w1, w2, w3)];
      if (d === last) return recs[last];
      lo = d;
      step *= 16;
    }
  }

  /**
   * The last interval in [lo, hi] whose start is <= the address (the caller
   * knows start(lo) is). Four-way: each round reads three probes at once, so
   * a range of n costs log4(n) rounds of misses instead of log2(n).
   */
  private lastAtOrBelow(lo: number, hi: number, w0: number, w1: number, w2: number, w3: number): number {
    const s = this.starts;
    while (hi - lo >= 4) {
      const q = (hi - lo) >>> 2;
      const m1 = lo + q;
      const m2 = m1 + q;
      const m3 = m2 + q;
      const a0 = s[4 * m1];
      const b0 = s[4 * m2];
      const c0 = s[4 * m3];
      if (this.probeLE(c0, m3, w0, w1, w2, w3)) lo = m3;
      else if (this.probeLE(b0, m2, w0, w1, w2, w3)) {
        lo = m2;
        hi = m3 - 1;
      } else if (this.probeLE(a0, m1, w0, w1, w2, w3)) {
        lo = m1;
        hi = m2 - 1;
      } else hi = m1 - 1;
    }
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.startLE(mid, w0, w1, w2, w3)) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** start(i) <= address, given start(i)'s first word `x0` already read. */
  private probeLE(x0: number, i: number, w0: number, w1: number, w2: number, w3: number): boolean {
    return x0 < w0 || (x0 === w0 && this.restLE(i * 4, w1, w2, w3));
  }

  /** start(i) <= address, compared word by word (most significant first). */
  startLE(i: number, w0: number, w1: number, w2: number, w3: number): boolean {
    const x0 = this.starts[i * 4];
    return x0 < w0 || (x0 === w0 && this.restLE(i * 4, w1, w2, w3));
  }

  /** Words 1..3 of the start at word `b` <= (w1, w2, w3). */
  private restLE(b: number, w1: number, w2: number, w3: number): boolean {
    const s = this.starts;
    return s[b + 1] < w1 || (s[b + 1] === w1 && (s[b + 2] < w2 || (s[b + 2] === w2 && s[b + 3] <= w3)));
  }
}
