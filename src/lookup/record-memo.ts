/**
 * A bounded memo keyed by record id, for values that are costly to make
 * (a record's serialized v1 tail): 4-way set associative, with a
 * frequency-based admission in the manner of TinyLFU (Einziger, Friedman and
 * Manes, "TinyLFU: A Highly Efficient Cache Admission Policy", 2017).
 *
 * Every request for a record is counted in a small table of saturating
 * counters (hashed, so a few records share one). When a new record's value
 * is offered and its set is full, it replaces the set's least frequently
 * asked record, and only if it has been asked more often itself; so one-off
 * lookups do not push out records that keep coming back. Counts are halved
 * every `10 * slots` requests, so the memo follows a change of traffic.
 *
 * On uniformly random IPv4 lookups (the benchmark's traffic, where a
 * record's share is its share of the address space) it hits clearly more
 * often than a direct-mapped memo of the same size (one slot per id modulo
 * the size; BENCHMARKS.md, "Measured changes in the code"); on skewed
 * traffic, every policy hits nearly always.
 */
import { ChunkedSlots } from '../index/tables.ts';

/** Slots per set: one 32-byte row of ids and stamps, scanned per lookup. */
export const MEMO_WAYS = 4;

/** Counter table size (one byte each): ~8 counters per slot of a 2^17-slot memo. */
const FREQUENCY_BITS = 20;

/** Requests between two halvings of every counter, per memo slot. */
const AGING_PERIOD_PER_SLOT = 10;

/** Saturating byte counters of hashed record ids, halved periodically. */
export class FrequencySketch {
  private readonly counts = new Uint8Array(1 << FREQUENCY_BITS);
  private readonly words = new Uint32Array(this.counts.buffer);
  private seen = 0;

  constructor(private readonly agingPeriod: number) {}

  /** Counts one request for `id`. */
  add(id: number): void {
    const i = slotOf(id);
    if (this.counts[i] !== 255) this.counts[i]++;
    if (++this.seen >= this.agingPeriod) this.halve();
  }

  /** The count of `id` (of every id hashed with it, which only ever overestimates). */
  frequency(id: number): number {
    return this.counts[slotOf(id)];
  }

  /** Halves every counter: old traffic weighs less than new. */
  halve(): void {
    const w = this.words;
    // Four counters per word, shifted together; the mask drops each byte's carried-in bit.
    for (let i = 0; i < w.length; i++) w[i] = (w[i] >>> 1) & 0x7f7f7f7f;
    this.seen = 0;
  }
}

/** Fibonacci hashing of an id into the counter table. */
const slotOf = (id: number) => Math.imul(id, 0x9e3779b1) >>> (32 - FREQUENCY_BITS);

/**
 * Whether a memo of `reader`'s records may key this hit by its record id: the
 * hit came from that index. Hand-made hits and hits under an override name no
 * index, and a hit of another index is not this memo's.
 */
export function isHitOf(hit: { readonly index?: object }, reader: object | null): boolean {
  return hit.index !== undefined && hit.index === reader;
}

/**
 * A memo of values by non-negative integer id (see the file comment). Each
 * slot holds `width` values and an integer stamp the caller gives meaning to
 * (V1BodyCache: the quarter hour a body was made in). The id and stamp rows
 * of a set share 32 bytes, and a slot's values sit side by side, so a hit
 * reads two cache lines before the values themselves.
 */
export class RecordMemo<V> {
  /** [id, stamp] per slot, id -1 when empty; a set is MEMO_WAYS consecutive slots. */
  private readonly rows: Int32Array;
  private readonly values: ChunkedSlots<V>;
  private readonly setMask: number;
  private readonly sketch: FrequencySketch;

  /** `slots` is a power of two, at least MEMO_WAYS; `width` (values per slot) a power of two up to 64. */
  constructor(
    readonly slots: number,
    readonly width = 1,
  ) {
    if (!Number.isInteger(Math.log2(slots)) || slots < MEMO_WAYS) throw new RangeError(`slots must be a power of two >= ${MEMO_WAYS}, got ${slots}`);
    if (!Number.isInteger(Math.log2(width)) || width < 1 || width > 64) throw new RangeError(`width must be a power of two <= 64, got ${width}`);
    this.rows = new Int32Array(slots * 2).fill(-1);
    this.values = new ChunkedSlots<V>(slots * width);
    this.setMask = slots / MEMO_WAYS - 1;
    this.sketch = new FrequencySketch(AGING_PERIOD_PER_SLOT * slots);
  }

  /** Counts one request for `id` (every request, held or not: the admission compares these). */
  touch(id: number): void {
    this.sketch.add(id);
  }

  /** The slot holding `id`, or -1. */
  find(id: number): number {
    const rows = this.rows;
    const first = (id & this.setMask) * MEMO_WAYS;
    for (let at = first; at < first + MEMO_WAYS; at++) if (rows[at * 2] === id) return at;
    return -1;
  }

  /** The stamp given with the values of `slot`. */
  stamp(slot: number): number {
    return this.rows[slot * 2 + 1];
  }

  /** Value `k` (0 <= k < width) of `slot`. */
  value(slot: number, k: number): V | undefined {
    return this.values.get(slot * this.width + k);
  }

  /**
   * A slot for `id` with `stamp`, whose values the caller then writes with
   * `set`: its own slot, a free slot of its set, or the set's least asked
   * id's if `id` was asked more often. -1 when not admitted.
   */
  admit(id: number, stamp: number): number {
    let at = this.find(id);
    if (at < 0) at = this.victimFor(id);
    if (at < 0) return -1;
    this.rows[at * 2] = id;
    this.rows[at * 2 + 1] = stamp;
    return at;
  }

  /** Sets value `k` of a slot `admit` gave. */
  set(slot: number, k: number, value: V): void {
    this.values.set(slot * this.width + k, value);
  }

  /** Forgets every value (counts stay: they describe traffic, not values). */
  clear(): void {
    this.rows.fill(-1);
    this.values.clear();
  }

  /** A free slot of id's set, else its least asked one when id was asked more; -1 otherwise. */
  private victimFor(id: number): number {
    const rows = this.rows;
    const first = (id & this.setMask) * MEMO_WAYS;
    let victim = -1;
    let least = Infinity;
    for (let at = first; at < first + MEMO_WAYS; at++) {
      const held = rows[at * 2];
      if (held === -1) return at;
      const f = this.sketch.frequency(held);
      if (f < least) (least = f), (victim = at);
    }
    return this.sketch.frequency(id) > least ? victim : -1;
  }
}
