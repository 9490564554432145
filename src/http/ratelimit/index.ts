/**
 * Rate limiting (spec section 8): the pieces the HTTP app uses per request.
 * See docs/rate-limits.md for the order of calls.
 */
export { createRateLimiter, createRateLimiterFromConfig, isRedisUrl, type RateLimiter, type RateLimiterOptions } from './limiter.ts';
export { bucketKeyFor, limiterKeyFor, type BucketKey } from './bucket-key.ts';
export { applyRateLimitHeaders, isSharedCacheable, rateLimitHeaders, shouldSendRateLimitHeaders } from './headers.ts';
export { rateLimitedError, upgradeUrlFor } from './rate-limited-error.ts';
export { limiterMetrics, type LimiterMetrics } from './limiter-metrics.ts';
export type { RateDecision } from './gcra.ts';
export { createCallerBudget, CALLER_BUDGET_BUCKETS, type CallerBudget } from './caller-budget.ts';
export { adminBudgetExceeded, adminScopes, createAdminFailureBudget, ADMIN_FAILURES_HOST_PER_MINUTE, ADMIN_FAILURES_PER_MINUTE, type AdminFailureBudget } from './admin-budget.ts';
export { allocateSharedBuckets, SharedBuckets, type SharedBucketsMemory } from './shared-store.ts';
