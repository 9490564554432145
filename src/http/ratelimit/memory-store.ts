/**
 * In-process buckets: bucket key -> tat (see gcra.ts), bounded and in
 * least-recently-used order.
 *
 * Storage: a Map from key to a slot number, and per slot a tat
 * (Float64Array) and prev/next links (Int32Array) of an LRU list, grown by
 * doubling up to `maxBuckets` as slots are first handed out (made whole at
 * construction they cost every thread ~15-20 ms of its start for buckets
 * most servers never fill). A touch
 * moves the slot to the tail in O(1) without touching the Map. (Reordering a
 * JS Map by delete+set instead leaves deleted entries at its head that every
 * later walk from the head must skip: quadratic under a flood.)
 *
 * Guarantees:
 *  - idle eviction: a bucket untouched for a window is full (tat <= now), and
 *    such buckets all sit at the head of the list, so `sweepIdle` removes them
 *    by walking from the head to the first non-full bucket. Removing a full
 *    bucket changes no decision.
 *  - a hard bound: never more than `maxBuckets` buckets. At the bound a full
 *    bucket near the head is reused if there is one; if a flood of distinct
 *    callers leaves none, the least recently seen bucket is dropped (that
 *    caller gets a fresh bucket early; counted in `evictedActiveBuckets`). A
 *    caller that keeps sending stays recent, so a flood must bring
 *    `maxBuckets` new callers between two of its requests to reset it.
 *
 * IPv4 callers (numeric keys, bucket-key.ts) are kept apart, in a
 * set-associative table of `maxBuckets` slots, a bound of its own beside the
 * Map's (shared-store.ts, here owned by this thread alone, made at the first
 * such caller): one cache line of ids
 * and one of tats per request instead of a Map entry and the list's links,
 * 16 bytes a bucket. Its bound and its one weakness are the worker pool's:
 * a full group drops its bucket nearest to full, which can only admit a
 * request early, never refuse one.
 */
import { describe, limitOf, step, type RateDecision } from './gcra.ts';
import { limiterMetrics } from './limiter-metrics.ts';
import type { Tier } from '../../tiers.ts';
import { DEFAULT_MAX_BUCKETS } from '../../memory-budget.ts';
import type { BucketKey } from './bucket-key.ts';
import { allocateSharedBuckets, SharedBuckets } from './shared-store.ts';

/** How often consume() walks the head of the list for idle buckets (ms of the limiter's clock). */
export const SWEEP_INTERVAL_MS = 10_000;

/** How far from the head a full bucket is looked for before a draining one is dropped. */
const RECLAIM_SCAN = 32;

const NONE = -1;

/** Slots made at construction; the arrays double from here as buckets are first handed out. */
const FIRST_SLOTS = 1024;

/** A bounded, LRU-ordered set of token buckets. */
export class MemoryBuckets {
  private readonly slotOf = new Map<string, number>();
  private readonly keys: (string | undefined)[] = [];
  private tats: Float64Array;
  private prev: Int32Array;
  private next: Int32Array;
  private head = NONE; // least recently used
  private tail = NONE; // most recently used
  private freeSlots: number[] = [];
  private used = 0; // slots ever handed out (0..maxBuckets)
  private nextSweepAt = -Infinity;
  /** The IPv4 callers' table (see above), made on first use: most stores here only ever see text keys. */
  private v4: SharedBuckets | null = null;

  constructor(readonly maxBuckets: number = DEFAULT_MAX_BUCKETS) {
    if (!Number.isInteger(maxBuckets) || maxBuckets < 1) throw new Error(`maxBuckets must be a positive integer (got ${maxBuckets})`);
    const first = Math.min(maxBuckets, FIRST_SLOTS);
    this.tats = new Float64Array(first);
    this.prev = new Int32Array(first);
    this.next = new Int32Array(first);
  }

  /** Number of buckets held. */
  get size(): number {
    return this.slotOf.size + (this.v4 === null ? 0 : this.v4.size);
  }

  /** Takes one token from `key`'s bucket at time `now` (ms) and reports the outcome; `limit` per minute (default: the tier's). */
  consume(key: BucketKey, tier: Tier, now: number, limit = limitOf(tier)): RateDecision {
    if (typeof key === 'number') return (this.v4 ??= new SharedBuckets(allocateSharedBuckets(this.maxBuckets))).consume(key, tier, now, limit);
    if (now >= this.nextSweepAt) {
      this.sweepIdle(now);
      this.nextSweepAt = now + SWEEP_INTERVAL_MS;
    }
    let slot = this.slotOf.get(key);
    if (slot === undefined) {
      const s = step(null, now, limit);
      slot = this.allocate(now);
      this.keys[slot] = key;
      this.tats[slot] = s.tat;
      this.slotOf.set(key, slot);
      this.append(slot);
      return describe(s.allowed, s.tat, now, limit, tier);
    }
    const s = step(this.tats[slot], now, limit);
    this.tats[slot] = s.tat;
    if (slot !== this.tail) {
      this.unlink(slot);
      this.append(slot);
    }
    return describe(s.allowed, s.tat, now, limit, tier);
  }

  /** Removes full buckets from the least-recent end; returns how many. */
  sweepIdle(now: number): number {
    let removed = 0;
    // Every bucket idle for a whole window lies before the first non-full one.
    while (this.head !== NONE && this.tats[this.head] <= now) {
      this.release(this.head);
      removed++;
    }
    return removed;
  }

  /** The stored tat of a key (for tests and diagnostics). */
  peek(key: string): number | undefined {
    const slot = this.slotOf.get(key);
    return slot === undefined ? undefined : this.tats[slot];
  }

  /** A free slot: never used, released, or reclaimed from a full or (last resort) the least recent bucket. */
  private allocate(now: number): number {
    if (this.freeSlots.length > 0) return this.freeSlots.pop()!;
    if (this.used < this.maxBuckets) {
      if (this.used === this.tats.length) this.grow();
      return this.used++;
    }
    let slot = this.head;
    for (let i = 0; i < RECLAIM_SCAN && slot !== NONE; i++, slot = this.next[slot]) {
      if (this.tats[slot] <= now) {
        this.release(slot);
        return this.freeSlots.pop()!;
      }
    }
    limiterMetrics.evictedActiveBuckets++;
    this.release(this.head);
    return this.freeSlots.pop()!;
  }

  /** Doubles the slots' arrays (at most to maxBuckets), keeping every slot where it is. */
  private grow(): void {
    const size = Math.min(this.maxBuckets, this.tats.length * 2);
    const tats = new Float64Array(size);
    const prev = new Int32Array(size);
    const next = new Int32Array(size);
    tats.set(this.tats);
    prev.set(this.prev);
    next.set(this.next);
    this.tats = tats;
    this.prev = prev;
    this.next = next;
  }

  private release(slot: number): void {
    this.unlink(slot);
    this.slotOf.delete(this.keys[slot]!);
    this.keys[slot] = undefined;
    this.freeSlots.push(slot);
  }

  private unlink(slot: number): void {
    const p = this.prev[slot];
    const n = this.next[slot];
    if (p === NONE) this.head = n;
    else this.next[p] = n;
    if (n === NONE) this.tail = p;
    else this.prev[n] = p;
  }

  private append(slot: number): void {
    this.prev[slot] = this.tail;
    this.next[slot] = NONE;
    if (this.tail === NONE) this.head = slot;
    else this.next[this.tail] = slot;
    this.tail = slot;
  }
}
