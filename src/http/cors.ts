/**
 * CORS for the API (spec: `/v1` answers carry CORS headers, preflight
 * included): any origin, no credentials, declared here once. The request
 * path (server.ts) adds them to every answer and answers every preflight
 * (OPTIONS, on any path) here; only the routes the table declares with
 * `prebuiltHeaders` (the lookups) build their answers from header sets that
 * carry them already (v1-pipeline.ts, routes/legacy.ts), because reading an
 * answer's headers to add them costs more than the rest of the request path
 * (BENCHMARKS.md, "A/B of the lookup route").
 */
const ALLOWED_METHODS = 'GET, POST, DELETE, OPTIONS';
const ALLOWED_HEADERS = 'Content-Type, X-API-Key, Authorization, If-None-Match';
const EXPOSED_HEADERS = 'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-RateLimit-Tier, Retry-After, ETag';

/** The CORS headers of every answer but a preflight's. */
export const CORS_RESPONSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'access-control-allow-headers': ALLOWED_HEADERS,
  'access-control-allow-methods': ALLOWED_METHODS,
  'access-control-allow-origin': '*',
  'access-control-expose-headers': EXPOSED_HEADERS,
});

/**
 * The answer to a preflight: 204, a one-day max age, the allowed methods
 * when the browser names the method it wants. `Vary: *` as browsers have
 * always been sent it here (a preflight is never shared-cached).
 */
export function preflightResponse(request: Request): Response {
  const headers: Record<string, string> = {
    'access-control-allow-headers': ALLOWED_HEADERS,
    'access-control-allow-origin': '*',
    'access-control-expose-headers': EXPOSED_HEADERS,
    'access-control-max-age': '86400',
    'cache-control': 'no-store',
    vary: '*',
  };
  if (request.headers.get('access-control-request-method')) headers['access-control-allow-methods'] = ALLOWED_METHODS;
  return new Response(null, { status: 204, headers });
}

/** Adds the CORS headers to an answer (not a preflight: preflightResponse has its own). */
export function addCorsHeaders(headers: Headers): void {
  for (const name in CORS_RESPONSE_HEADERS) headers.set(name, CORS_RESPONSE_HEADERS[name]);
}
