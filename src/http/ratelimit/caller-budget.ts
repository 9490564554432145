/**
 * A small per-caller budget of some costly thing per minute (refused admin
 * tokens, uncached upstream calls), apart from the usage buckets: a token
 * bucket per caller's bucket key, in this thread's memory or in a table
 * shared by the workers of a host.
 */
import type { RateDecision } from './gcra.ts';
import { MemoryBuckets } from './memory-store.ts';
import { SharedBuckets, type SharedBucketsMemory } from './shared-store.ts';

/** Callers one budget tracks at once (a full table drops the bucket nearest to full, as the usage buckets do). */
export const CALLER_BUDGET_BUCKETS = 4096;

/** Spends one unit of a caller's budget. */
export interface CallerBudget {
  /** Takes one from the caller's budget (its rate-limit bucket key); refused past the budget. */
  spend(bucketKey: string): RateDecision;
}

/** A budget of `perMinute` per caller, in this thread's memory or in `shared` (allocateSharedBuckets(CALLER_BUDGET_BUCKETS)). */
export function createCallerBudget(perMinute: number, shared?: SharedBucketsMemory, now: () => number = Date.now): CallerBudget {
  const buckets = shared ? new SharedBuckets(shared) : new MemoryBuckets(CALLER_BUDGET_BUCKETS);
  return { spend: (key) => buckets.consume(key, 'anonymous', now(), perMinute) };
}
