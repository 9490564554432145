/**
 * Process-wide limiter counters for the /metrics route (Prometheus counters
 * only ever grow, so every limiter in the process adds to the same object).
 */

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

/** Prometheus text lines for the limiter counters (to append to the /metrics body). */
export function limiterMetricsText(m: LimiterMetrics = limiterMetrics): string {
  return [
    '# HELP ipintel_ratelimit_admitted_total Requests admitted by the rate limiter.',
    '# TYPE ipintel_ratelimit_admitted_total counter',
    `ipintel_ratelimit_admitted_total ${m.admitted}`,
    '# HELP ipintel_ratelimit_rejected_total Requests refused with 429 RATE_LIMITED.',
    '# TYPE ipintel_ratelimit_rejected_total counter',
    `ipintel_ratelimit_rejected_total ${m.rejections}`,
    '# HELP ipintel_ratelimit_redis_errors_total Rate-limit store calls that failed or timed out.',
    '# TYPE ipintel_ratelimit_redis_errors_total counter',
    `ipintel_ratelimit_redis_errors_total ${m.redisErrors}`,
    '# HELP ipintel_ratelimit_fallback_decisions_total Decisions taken by local buckets while the shared store was unreachable.',
    '# TYPE ipintel_ratelimit_fallback_decisions_total counter',
    `ipintel_ratelimit_fallback_decisions_total ${m.fallbackDecisions}`,
    '# HELP ipintel_ratelimit_evicted_active_buckets_total Non-full buckets dropped because the bucket map was at its bound.',
    '# TYPE ipintel_ratelimit_evicted_active_buckets_total counter',
    `ipintel_ratelimit_evicted_active_buckets_total ${m.evictedActiveBuckets}`,
    '# HELP ipintel_ratelimit_store_degraded 1 while the shared rate-limit store is unreachable and local buckets decide.',
    '# TYPE ipintel_ratelimit_store_degraded gauge',
    `ipintel_ratelimit_store_degraded ${m.redisDegraded}`,
    '',
  ].join('\n');
}
