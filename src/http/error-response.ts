/**
 * The one rendering of an error (spec section 7): JSON `{error, code,
 * details}`, or for a legacy route whose request asked for text one line
 * `error: <message>` with the status the JSON would have (spec 4.6 rule 6).
 * Layers throw ApiError (src/api-error.ts); whatever else is thrown becomes 500
 * INTERNAL_ERROR here, logged here once. CORS is not added here: the
 * request path adds it to every answer (server.ts).
 */
import { ApiError } from '../api-error.ts';

/** The JSON media type of every JSON answer. */
export const JSON_TYPE = 'application/json;charset=utf-8';
/** The plain-text media type of text answers (legacy routes, their errors). */
export const TEXT_TYPE = 'text/plain; charset=utf-8';

/** An error as a Response, JSON or (`text`) one line; never shared-cached. */
export function errorResponse(err: ApiError, extraHeaders: Record<string, string> = {}, text = false): Response {
  if (text) {
    return new Response(`error: ${err.message}\n`, {
      status: err.status,
      headers: { 'content-type': TEXT_TYPE, 'cache-control': 'no-store', vary: 'Accept', ...err.headers, ...extraHeaders },
    });
  }
  return new Response(JSON.stringify(err.toBody()), {
    status: err.status,
    headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-store', ...err.headers, ...extraHeaders },
  });
}

/** 404 for a path no route answers (the request path, the mounted app, /docs/*). */
export const NOT_FOUND = new ApiError('NOT_FOUND', 'No such endpoint or resource', {});

const INTERNAL = new ApiError('INTERNAL_ERROR', 'Unexpected server error', {});

/**
 * Anything thrown while answering, as the answer: an ApiError as itself,
 * anything else 500 INTERNAL_ERROR with its cause in the log only. `where`
 * names the route (its label, never the client's path) in that log line.
 */
export function failureResponse(e: unknown, text: boolean, where: string): Response {
  if (e instanceof ApiError) return errorResponse(e, {}, text);
  console.error(`request failed (${where}): ${e instanceof Error ? e.name + ': ' + e.message : String(e)}`);
  return errorResponse(INTERNAL, {}, text);
}
