/**
 * Process-wide limiter counters, read by the /metrics route (src/http/http-metrics.ts).
 * Counters only ever grow, so every limiter in the process adds to one object.
 */

/** The counters (plain numbers: the hot path only increments them). */
export interface LimiterMetrics {
  /** Requests admitted. */
  admitted: number;
  /** Requests refused with 429. */
  rejections: number;
  /** Redis calls that failed or timed out (each answered from the local fallback). */
  redisErrors: number;
  /** Decisions taken by the local fallback buckets while Redis was unreachable. */
  fallbackDecisions: number;
  /** Non-full buckets dropped because the bucket map hit its bound (a caller got a fresh bucket early). */
  evictedActiveBuckets: number;
  /** 1 while a Redis-backed limiter is running on its local fallback, else 0. */
  redisDegraded: number;
}

/** The process's limiter counters. */
export const limiterMetrics: LimiterMetrics = {
  admitted: 0,
  rejections: 0,
  redisErrors: 0,
  fallbackDecisions: 0,
  evictedActiveBuckets: 0,
  redisDegraded: 0,
};
