/**
 * Which requests take a token. Everything counts (lookups, assessment,
 * verify, ASN, status, legacy routes, sign-in and account routes, the
 * dashboard, even 404s and 405s, so scanners are limited too) except what
 * must stay reachable regardless of a caller's budget and does no work for
 * an anonymous client: CORS preflights, operator routes (health checks,
 * metrics scrapes, reload), the API docs, and the files browsers ask for.
 * Sign-in and account routes count: each reads the session store for any
 * cookie a client makes up, and the sign-in callback calls the identity
 * provider.
 *
 * Routes that take no token need no key either: there X-API-Key is not read
 * at all (no 401 for a bad key, so no free oracle of which keys exist).
 */

const EXEMPT_PATHS = new Set(['/health', '/metrics', '/reload', '/openapi.json', '/favicon.ico', '/robots.txt']);
/** Folders exempt with everything below them. */
const EXEMPT_FOLDERS = ['/docs'];

/** Routes that read the admin token (a wrong one spends the caller's admin budget, admin-budget.ts). */
export const ADMIN_TOKEN_ROUTES: ReadonlySet<string> = new Set(['/metrics', '/reload', '/v1/data/status']);

/** Whether a request is exempt from rate limiting (no token taken, no X-RateLimit-* headers). */
export function isExemptFromRateLimit(method: string, path: string): boolean {
  if (method === 'OPTIONS') return true;
  if (EXEMPT_PATHS.has(path)) return true;
  for (const folder of EXEMPT_FOLDERS) {
    if (path.startsWith(folder) && (path.length === folder.length || path.charCodeAt(folder.length) === 47)) return true;
  }
  return false;
}
