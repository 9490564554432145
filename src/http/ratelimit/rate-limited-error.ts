/**
 * The 429 RATE_LIMITED error of spec 8 rule 3, and where its `upgrade_url` points.
 */
import { ApiError } from '../../api-error.ts';
import type { RateDecision } from './gcra.ts';
import { rateLimitHeaders } from './headers.ts';

/**
 * The upgrade address when IPINTEL_UPGRADE_URL is unset: a path on this
 * server. Relative on purpose: the request's Host is the client's to choose,
 * so an absolute address built from it would point wherever the client said.
 */
export const DEFAULT_UPGRADE_PATH = '/pricing';

/** The upgrade address: IPINTEL_UPGRADE_URL when configured, else the relative `/pricing` (never from the request). */
export function upgradeUrlFor(configured: string | null): string {
  return configured !== null && configured !== '' ? configured : DEFAULT_UPGRADE_PATH;
}

/** A refused decision as the spec's 429: details limit/remaining/reset_at/upgrade_url, the four headers, Retry-After. */
export function rateLimitedError(decision: RateDecision, upgradeUrl: string): ApiError {
  const refused = { ...decision, remaining: 0 };
  return new ApiError(
    'RATE_LIMITED',
    `Rate limit exceeded: ${decision.limit} requests per minute for the ${decision.tier} tier`,
    {
      limit: decision.limit,
      remaining: 0,
      reset_at: new Date(decision.resetAt * 1000).toISOString(),
      upgrade_url: upgradeUrl,
    },
    { ...rateLimitHeaders(refused), 'Retry-After': String(Math.max(1, decision.retryAfter)) },
  );
}
