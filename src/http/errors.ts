/**
 * The spec's error shape as a response (section 7): every error is JSON with
 * `error`, `code` and `details`. Layers throw ApiError (src/errors.ts); the
 * app's error hook and the request pipeline render it here.
 */
import type { ApiError } from '../errors.ts';

/** A JSON error Response (Cache-Control no-store: errors are never shared-cached). */
export function errorResponse(err: ApiError, extraHeaders: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(err.toBody()), {
    status: err.status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      ...err.headers,
      ...extraHeaders,
    },
  });
}
