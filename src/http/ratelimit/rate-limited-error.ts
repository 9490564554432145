/**
 * The 429 RATE_LIMITED error of spec 8 rule 3, and where its `upgrade_url` points.
 */
import { ApiError } from '../errors.ts';
import type { RateDecision } from './gcra.ts';
import { rateLimitHeaders } from './headers.ts';

/** The path appended to the request's origin when IPINTEL_UPGRADE_URL is unset. */
export const DEFAULT_UPGRADE_PATH = '/pricing';

/** The upgrade address: IPINTEL_UPGRADE_URL when configured, else `<origin of the request>/pricing`. */
export function upgradeUrlFor(requestUrl: string, configured: string | null): string {
  if (configured !== null && configured !== '') return configured;
  return new URL(DEFAULT_UPGRADE_PATH, requestUrl).href;
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
