/**
 * The budget of refused admin tokens: a request that presents an
 * `Authorization` header to a route reading the admin token (`readsAdminToken`
 * in routes/table.ts), and it is not the token, takes one from its caller's
 * small per-minute budget; past it the answer is 429. An operator's token may
 * be weak, so guessing it must not be free. Kept apart from the usage
 * buckets (a caller's lookups never spend it, IPINTEL_RATE_LIMITS=off does
 * not lift it) and shared by the workers of a host like them.
 */
import { ApiError } from '../../errors.ts';
import { createCallerBudget, type CallerBudget } from './caller-budget.ts';
import type { RateDecision } from './gcra.ts';
import { rateLimitHeaders } from './headers.ts';
import type { SharedBucketsMemory } from './shared-store.ts';

/** Refused admin tokens one caller may present per minute. */
export const ADMIN_FAILURES_PER_MINUTE = 10;

/** Spends refused admin tokens. */
export type AdminFailureBudget = CallerBudget;

/** The admin budget, in this thread's memory or in `shared` for the workers of a host. */
export function createAdminFailureBudget(shared?: SharedBucketsMemory, now: () => number = Date.now): AdminFailureBudget {
  return createCallerBudget(ADMIN_FAILURES_PER_MINUTE, shared, now);
}

/** The 429 past the budget (the spec's RATE_LIMITED shape, with Retry-After). */
export function adminBudgetExceeded(decision: RateDecision): ApiError {
  const refused = { ...decision, remaining: 0 };
  return new ApiError(
    'RATE_LIMITED',
    `Too many refused admin tokens: at most ${decision.limit} per minute`,
    { limit: decision.limit, remaining: 0, reset_at: new Date(decision.resetAt * 1000).toISOString() },
    { ...rateLimitHeaders(refused), 'Retry-After': String(Math.max(1, decision.retryAfter)) },
  );
}
