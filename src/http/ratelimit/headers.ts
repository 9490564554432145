/**
 * The four X-RateLimit-* headers of spec section 8 and when they appear.
 * A shared cache (CDN) would replay one caller's remaining count to everyone,
 * so responses a shared cache may store go without them (rule 2); everything
 * else carries them (rule 1), every 429 included (rule 3).
 */
import type { RateDecision } from './gcra.ts';

/** The four headers for a decision (names as the spec spells them). */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(decision.limit),
    'X-RateLimit-Remaining': String(decision.remaining),
    'X-RateLimit-Reset': String(decision.resetAt),
    'X-RateLimit-Tier': decision.tier,
  };
}

/**
 * Whether a Cache-Control value lets a shared cache store the response:
 * `public` or `s-maxage`, unless `no-store` or `private` says otherwise.
 */
export function isSharedCacheable(cacheControl: string | null): boolean {
  if (cacheControl === null) return false;
  // Answers carry a handful of prebuilt values: the last one's verdict is kept, so a request does not split and lower-case it again.
  if (cacheControl === lastCacheControl) return lastShared;
  const shared = parseSharedCacheable(cacheControl);
  lastCacheControl = cacheControl;
  lastShared = shared;
  return shared;
}

let lastCacheControl: string | null = null;
let lastShared = false;

/** isSharedCacheable's reading of one value, unremembered. */
function parseSharedCacheable(cacheControl: string): boolean {
  let shared = false;
  for (const part of cacheControl.toLowerCase().split(',')) {
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).trim();
    if (name === 'no-store' || name === 'private') return false;
    if (name === 'public' || name === 's-maxage') shared = true;
  }
  return shared;
}

/**
 * Spec 8 rules 1-3: whether a response with this status and Cache-Control
 * carries the rate-limit headers. Omitted only on successful shared-cacheable
 * responses; a 304 counts as successful because a cache merges its headers
 * into the stored (shared) response.
 */
export function shouldSendRateLimitHeaders(status: number, cacheControl: string | null): boolean {
  if (status === 429) return true;
  const successful = (status >= 200 && status < 300) || status === 304;
  return !(successful && isSharedCacheable(cacheControl));
}

/** Adds the four headers to a response's headers when spec 8 says they belong there (reads its Cache-Control). */
export function applyRateLimitHeaders(headers: Headers, decision: RateDecision, status: number): void {
  if (!shouldSendRateLimitHeaders(status, headers.get('cache-control'))) return;
  // Set one by one: no intermediate object per answer (the names and values are rateLimitHeaders').
  headers.set('X-RateLimit-Limit', String(decision.limit));
  headers.set('X-RateLimit-Remaining', String(decision.remaining));
  headers.set('X-RateLimit-Reset', String(decision.resetAt));
  headers.set('X-RateLimit-Tier', decision.tier);
}
