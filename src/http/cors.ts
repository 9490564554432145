/**
 * CORS for the API (spec: `/v1` answers carry CORS headers, preflight
 * included): one set of options for the Elysia plugin and, for the routes
 * answered before the framework (v1-pipeline.ts), the
 * headers the plugin puts on a simple request with these options.
 */
import { cors } from '@elysiajs/cors';

const ALLOWED_METHODS = ['GET', 'POST', 'DELETE', 'OPTIONS'];
const ALLOWED_HEADERS = ['Content-Type', 'X-API-Key', 'Authorization', 'If-None-Match'];
const EXPOSED_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-RateLimit-Tier', 'Retry-After', 'ETag'];

/** The Elysia CORS plugin with the API's options. */
export function corsPlugin() {
  return cors({ origin: '*', credentials: false, methods: ALLOWED_METHODS, allowedHeaders: ALLOWED_HEADERS, exposeHeaders: EXPOSED_HEADERS, maxAge: 86400 });
}

/** The CORS headers of a non-preflight answer (equality with the plugin's is tested). */
export const CORS_RESPONSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'access-control-allow-headers': ALLOWED_HEADERS.join(', '),
  'access-control-allow-methods': ALLOWED_METHODS.join(', '),
  'access-control-allow-origin': '*',
  'access-control-expose-headers': EXPOSED_HEADERS.join(', '),
});
