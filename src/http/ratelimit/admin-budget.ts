/**
 * The budget of refused admin tokens: a request that presents an
 * `Authorization` header to a route reading the admin token (`readsAdminToken`
 * in routes/table.ts), and it is not the token, takes one from its caller's
 * small per-minute budget; past it the answer is 429. An operator's token may
 * be weak, so guessing it must not be free. Kept apart from the usage
 * buckets (a caller's lookups never spend it, IPINTEL_RATE_LIMITS=off does
 * not lift it) and shared by the workers of a host like them.
 */
import { ApiError } from '../../api-error.ts';
import { parseIPv6Groups } from '../../net/ip.ts';
import { bucketKeyText, ipv6BucketKey, UNKNOWN_IP_BUCKET } from './bucket-key.ts';
import { CALLER_BUDGET_BUCKETS } from './caller-budget.ts';
import type { RateDecision } from './gcra.ts';
import { rateLimitHeaders } from './headers.ts';
import { MemoryBuckets } from './memory-store.ts';
import { SharedBuckets, type SharedBucketsMemory } from './shared-store.ts';

/** Refused admin tokens per minute from one address (IPv6: one /64), and as many from its /48 and its /32. */
export const ADMIN_FAILURES_PER_MINUTE = 10;
/** Refused admin tokens per minute from everyone together: a guesser spread over many networks gets no more. */
export const ADMIN_FAILURES_HOST_PER_MINUTE = 60;

/** The budget a refusal is taken from: its key and what it allows a minute. */
interface Scope {
  key: string;
  perMinute: number;
}

const groups = new Uint16Array(8);
const hex = (i: number) => groups[i].toString(16);

/**
 * The budgets a refused token from `ip` spends, narrowest first: the
 * caller's address (IPv6: its /64, as the usage buckets key it), for IPv6
 * its /48 and /32 too (a /48 is routinely one site's, so rotating through
 * its 65 536 /64s gains nothing), and the host's.
 */
export function adminScopes(ip: string | null): Scope[] {
  const host: Scope = { key: 'admin:host', perMinute: ADMIN_FAILURES_HOST_PER_MINUTE };
  if (ip === null || ip === '') return [{ key: UNKNOWN_IP_BUCKET, perMinute: ADMIN_FAILURES_PER_MINUTE }, host];
  if (ip.indexOf(':') < 0) return [{ key: 'ip:' + ip, perMinute: ADMIN_FAILURES_PER_MINUTE }, host];
  const own = bucketKeyText(ipv6BucketKey(ip));
  const pct = ip.indexOf('%');
  if (!own.startsWith('ip6:') || !parseIPv6Groups(pct < 0 ? ip : ip.slice(0, pct), groups)) return [{ key: own, perMinute: ADMIN_FAILURES_PER_MINUTE }, host];
  return [
    { key: own, perMinute: ADMIN_FAILURES_PER_MINUTE },
    { key: `ip6:${hex(0)}:${hex(1)}:${hex(2)}::/48`, perMinute: ADMIN_FAILURES_PER_MINUTE },
    { key: `ip6:${hex(0)}:${hex(1)}::/32`, perMinute: ADMIN_FAILURES_PER_MINUTE },
    host,
  ];
}

/** A refusal's decision, with the budget that decided it (the narrowest one spent out, else the caller's own). */
export type AdminDecision = RateDecision & { scope: string };

/** Spends refused admin tokens. */
export interface AdminFailureBudget {
  /** Takes one refused token from every budget of the caller at `ip`, narrowest first; refused as soon as one is spent out (the wider ones are then left alone). */
  spend(ip: string | null): AdminDecision;
}

/** The admin budget, in this thread's memory or in `shared` (allocateSharedBuckets(CALLER_BUDGET_BUCKETS)) for the workers of a host. */
export function createAdminFailureBudget(shared?: SharedBucketsMemory, now: () => number = Date.now): AdminFailureBudget {
  const buckets = shared ? new SharedBuckets(shared) : new MemoryBuckets(CALLER_BUDGET_BUCKETS);
  return {
    spend(ip) {
      const at = now();
      let first: AdminDecision | null = null;
      let tightest: AdminDecision | null = null;
      for (const scope of adminScopes(ip)) {
        const d: AdminDecision = { ...buckets.consume(scope.key, 'anonymous', at, scope.perMinute), scope: scope.key };
        first ??= d;
        if (!d.allowed) return d;
        if (tightest === null || d.remaining < tightest.remaining) tightest = d;
      }
      // Allowed by every budget: the one with the fewest tries left speaks (its headers, its log line).
      return tightest ?? first!;
    },
  };
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
