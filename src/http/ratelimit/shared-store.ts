/**
 * Token buckets in a SharedArrayBuffer, so every worker thread of one host
 * (src/host/workers/) decides a caller's requests against the same bucket: the
 * per-minute limits stay exact however many workers serve.
 *
 * A set-associative table: a bucket key hashes (two independent 32-bit
 * hashes, stored as its identity; two keys agreeing on all 64 bits would
 * share a bucket, a chance far below one in a billion at the table's size) to one group of WAYS slots, each slot a
 * tat (gcra.ts). A group is taken with a spin lock (Atomics.compareExchange)
 * for the few loads and stores of one step, so two workers seeing the same
 * new caller cannot both create a bucket for it.
 *
 * Bounded like the in-process store: a fixed number of slots made at
 * start-up. A full bucket (tat <= now) is the same as no bucket, so such a
 * slot is reused in place; when a group has none, its most nearly full
 * bucket is dropped (counted in `evictedActiveBuckets`), which can only
 * admit a request early, never refuse one.
 */
import { describe, limitOf, step, type RateDecision } from './gcra.ts';
import { limiterMetrics } from './limiter-metrics.ts';
import type { Tier } from '../../tiers.ts';
import type { BucketKey } from './bucket-key.ts';

/** Slots per group (one lock, scanned whole per request). */
const WAYS = 8;

/**
 * Spins on a group lock before taking it over. A worker thread terminated
 * inside the few statements of a step would otherwise leave its group
 * locked for good; no live holder keeps a lock anywhere near this long.
 */
const MAX_SPINS = 1 << 22;

/** What the table is made of: share `buffer` with every worker (postMessage). */
export interface SharedBucketsMemory {
  buffer: SharedArrayBuffer;
  groups: number;
}

/** Allocates a table of at least `maxBuckets` slots (rounded up to a power-of-two number of groups). */
export function allocateSharedBuckets(maxBuckets: number): SharedBucketsMemory {
  if (!Number.isInteger(maxBuckets) || maxBuckets < 1) throw new Error(`maxBuckets must be a positive integer (got ${maxBuckets})`);
  let groups = 1;
  while (groups * WAYS < maxBuckets) groups *= 2;
  const slots = groups * WAYS;
  // tats (f64), then identities (2 x i32 per slot), locks (i32 per group), one i32 counter.
  const bytes = slots * 8 + slots * 8 + groups * 4 + 4;
  return { buffer: new SharedArrayBuffer(bytes), groups };
}

/** One worker's view of the shared table. */
export class SharedBuckets {
  private readonly tats: Float64Array;
  private readonly ids: Int32Array;
  private readonly locks: Int32Array;
  private readonly counter: Int32Array;
  private readonly mask: number;

  constructor(memory: SharedBucketsMemory) {
    const { buffer, groups } = memory;
    const slots = groups * WAYS;
    this.tats = new Float64Array(buffer, 0, slots);
    this.ids = new Int32Array(buffer, slots * 8, slots * 2);
    this.locks = new Int32Array(buffer, slots * 16, groups);
    this.counter = new Int32Array(buffer, slots * 16 + groups * 4, 1);
    this.mask = groups - 1;
  }

  /** Slots ever taken by a bucket (a slot whose bucket refilled stays counted until reused). */
  get size(): number {
    return Atomics.load(this.counter, 0);
  }

  /** Takes one token from `key`'s bucket at time `now` (ms) and reports the outcome; `limit` per minute (default: the tier's). */
  consume(key: BucketKey, tier: Tier, now: number, limit = limitOf(tier)): RateDecision {
    let a: number;
    let b: number;
    if (typeof key === 'number') {
      // An IPv4 caller (bucket-key.ts): two bijective mixes of the address, so two addresses never share an identity.
      a = fmix32(key ^ 0x7f4a7c15);
      b = fmix32(key ^ 0x2545f491);
    } else {
      // Two independent 32-bit hashes in one pass over the key (JS: cheaper here than a native hash's call and encoding).
      a = 0x811c9dc5;
      b = 0x9e3779b9;
      for (let i = 0; i < key.length; i++) {
        const c = key.charCodeAt(i);
        a = Math.imul(a ^ c, 0x01000193);
        b = Math.imul(b ^ c, 0x5bd1e995);
        b ^= b >>> 15;
      }
    }
    // 0/0 marks an empty slot.
    if (b === 0) b = 1;
    const group = b & this.mask;
    this.lock(group);
    try {
      const base = group * WAYS;
      let slot = -1;
      for (let i = base; i < base + WAYS; i++) {
        if (this.ids[2 * i] === a && this.ids[2 * i + 1] === b) {
          slot = i;
          break;
        }
      }
      let stored: number | null = null;
      if (slot !== -1) stored = this.tats[slot];
      else {
        slot = this.victim(base, now);
        const wasEmpty = this.ids[2 * slot] === 0 && this.ids[2 * slot + 1] === 0;
        if (wasEmpty) Atomics.add(this.counter, 0, 1);
        else if (this.tats[slot] > now) limiterMetrics.evictedActiveBuckets++;
        this.ids[2 * slot] = a;
        this.ids[2 * slot + 1] = b;
      }
      const s = step(stored, now, limit);
      this.tats[slot] = s.tat;
      return describe(s.allowed, s.tat, now, limit, tier);
    } finally {
      Atomics.store(this.locks, group, 0);
    }
  }

  /** The slot a new bucket takes in a group: an empty one, else a full bucket, else the bucket nearest to full. */
  private victim(base: number, now: number): number {
    let best = base;
    let bestRank = -1;
    for (let i = base; i < base + WAYS; i++) {
      const rank = this.reusable(i, now);
      if (rank > bestRank || (rank === bestRank && this.tats[i] < this.tats[best])) {
        best = i;
        bestRank = rank;
      }
    }
    return best;
  }

  /** 2: empty slot, 1: a full bucket (same as none), 0: a bucket in use. */
  private reusable(slot: number, now: number): number {
    if (this.ids[2 * slot] === 0 && this.ids[2 * slot + 1] === 0) return 2;
    return this.tats[slot] <= now ? 1 : 0;
  }

  private lock(group: number): void {
    for (let spins = 0; Atomics.compareExchange(this.locks, group, 0, 1) !== 0; spins++) {
      if (spins >= MAX_SPINS) {
        // The holder died mid-step (see MAX_SPINS): take the lock over.
        Atomics.store(this.locks, group, 1);
        return;
      }
    }
  }
}

/** MurmurHash3's 32-bit finalizer: a bijection on 32-bit integers that spreads every input bit. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
