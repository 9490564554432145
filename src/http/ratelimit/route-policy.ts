/**
 * Which requests take a token. Everything counts (lookups, assessment,
 * verify, ASN, status, legacy routes, even 404s, so scanners are limited too)
 * except what must stay reachable regardless of a caller's budget: CORS
 * preflights, operator routes (health checks, metrics scrapes, reload), the
 * API docs, and the session-guarded account pages and routes.
 */

const EXEMPT_PATHS = new Set(['/health', '/metrics', '/reload', '/openapi.json', '/dashboard', '/favicon.ico']);
/** Folders exempt with everything below them. */
const EXEMPT_FOLDERS = ['/docs', '/swagger', '/auth'];

/** Whether a request is exempt from rate limiting (no token taken, no X-RateLimit-* headers). */
export function isExemptFromRateLimit(method: string, path: string): boolean {
  if (method === 'OPTIONS') return true;
  if (EXEMPT_PATHS.has(path)) return true;
  for (const folder of EXEMPT_FOLDERS) {
    if (path.startsWith(folder) && (path.length === folder.length || path.charCodeAt(folder.length) === 47)) return true;
  }
  return false;
}
