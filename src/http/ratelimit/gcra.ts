/**
 * Token-bucket arithmetic in its GCRA form (generic cell rate algorithm).
 *
 * A bucket of capacity C refilling C tokens per minute is stored as ONE
 * number: the "theoretical arrival time" (tat), the instant in ms at which the
 * bucket is full again. Each admitted request pushes tat by one emission
 * interval T = 60 000 / C ms; a request is admitted while tat stays within one
 * window (60 s) of now. Consequences the limiter relies on:
 *  - tat <= now means "full", which is the same as "no entry": a full bucket
 *    can be dropped from any store without changing a single decision;
 *  - the window is 60 s for every tier, so a key whose tier changes keeps its
 *    debt (in ms) and simply repays it at the new rate;
 *  - `X-RateLimit-Reset` (when the bucket is full again) is tat itself.
 * The Redis Lua script (redis-script.ts) performs the same step; both stores
 * then derive the reported numbers with `describe` below.
 */
import { TIERS, type Tier } from '../../tiers.ts';

/** Length of the refill window: the spec's limits are per minute. */
export const WINDOW_MS = 60_000;

/**
 * Slack for float rounding when T is not an integer (e.g. 60 000 / 7): C
 * additions of T must still fit the window. Far below a microsecond, so it
 * can never admit an extra request.
 */
export const EPSILON_MS = 1e-6;

/** What a limiter tells the HTTP layer about one request. */
export interface RateDecision {
  allowed: boolean;
  /** Requests per minute of the tier (X-RateLimit-Limit). */
  limit: number;
  /** Whole requests still available right now (X-RateLimit-Remaining). */
  remaining: number;
  /** Unix second at which the bucket is full again (X-RateLimit-Reset), rounded up. */
  resetAt: number;
  /** Seconds until the next request would be admitted (Retry-After); 0 when allowed. */
  retryAfter: number;
  tier: Tier;
}

/** Result of one bucket step: whether admitted and the tat to store. */
export interface BucketStep {
  allowed: boolean;
  /** The bucket's tat after this request (unchanged when refused). */
  tat: number;
}

/** Requests per minute of a tier, from the one tier table. */
export function limitOf(tier: Tier): number {
  return TIERS[tier].requestsPerMinute;
}

/** One token-bucket step for a bucket of `limit` per minute: stored tat (null: fresh bucket) and now -> admitted or not, and the new tat. */
export function step(storedTat: number | null, now: number, limit: number): BucketStep {
  let tat = storedTat === null || storedTat < now ? now : storedTat;
  // A tat beyond one window can only come from a clock that stepped back: cap the debt at one window.
  if (tat > now + WINDOW_MS) tat = now + WINDOW_MS;
  const next = tat + WINDOW_MS / limit;
  if (next - now > WINDOW_MS + EPSILON_MS) return { allowed: false, tat };
  return { allowed: true, tat: next };
}

/** The numbers reported for a step taken at `now` (pure; shared by the memory and Redis stores). */
export function describe(allowed: boolean, tat: number, now: number, limit: number, tier: Tier): RateDecision {
  const interval = WINDOW_MS / limit;
  const debt = tat > now ? tat - now : 0;
  // Tokens left = unused part of the window, in whole requests.
  const remaining = Math.max(0, Math.min(limit, Math.floor((WINDOW_MS - debt) / interval + EPSILON_MS)));
  const retryAfter = allowed ? 0 : Math.max(1, Math.ceil((debt + interval - WINDOW_MS) / 1000));
  return {
    allowed,
    limit,
    remaining: allowed ? remaining : 0,
    resetAt: Math.ceil(Math.max(tat, now) / 1000),
    retryAfter,
    tier,
  };
}
