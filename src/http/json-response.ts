/** A JSON answer of a route: the body serialized once, the one JSON media type. */
import { JSON_TYPE } from './error-response.ts';

/** A 200 JSON Response of `body` with these headers (at least its Cache-Control). */
export function jsonResponse(body: unknown, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(body), { headers: { 'content-type': JSON_TYPE, ...headers } });
}
