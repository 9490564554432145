/**
 * Legacy GET / and GET /{ip} (spec 4.6, 4.9): the flat legacy JSON, or
 * plain text by `format=text` / Accept, with a strong ETag on /{ip}.
 */
import { ApiError } from '../../api-error.ts';
import { JSON_TYPE, TEXT_TYPE } from '../error-response.ts';
import { CORS_RESPONSE_HEADERS } from '../cors.ts';
import { legacyQuery, NO_QUERY, wantsText, type LegacyQuery } from '../negotiation.ts';
import type { LiveSources } from '../../lookup/answerer.ts';
import type { AppServices } from '../services.ts';
import { callerIpOrThrow, liveSourcesOf, lookupOrThrow } from '../address-lookup.ts';
import { lastSegmentParam } from '../request-params.ts';
import type { RouteHandler } from '../route-table.ts';

const CURRENT_CACHE = 'no-store, no-cache, must-revalidate';
const EXPLICIT_CACHE = 'public, max-age=86400';

/** Hash seeds per representation (text, JSON), so an ETag covers it without hashing it with every body. */
// Fixed values: changing a seed changes every ETag clients hold, so each stays whatever the media type's spelling.
const TEXT_SEED = 0xa65ccff214457548n;
const JSON_SEED = 0x83955c61bb09bc63n;

/** A strong validator over the exact bytes and their media type. */
function etagOf(text: boolean, body: string): string {
  return `"${Bun.hash.wyhash(body, text ? TEXT_SEED : JSON_SEED).toString(16)}"`;
}

/**
 * The four header sets of a legacy answer (media type x caching), with the
 * CORS headers (cors.ts). A Response copies the Headers it is given, and
 * copying one costs less than building it or adding headers to the copy.
 */
const headerSet = (type: string, caching: string) => new Headers({ ...CORS_RESPONSE_HEADERS, 'content-type': type, 'cache-control': caching, vary: 'Accept' });
const HEADER_SETS = {
  text: { current: headerSet(TEXT_TYPE, CURRENT_CACHE), explicit: headerSet(TEXT_TYPE, EXPLICIT_CACHE) },
  json: { current: headerSet(JSON_TYPE, CURRENT_CACHE), explicit: headerSet(JSON_TYPE, EXPLICIT_CACHE) },
};

/** Whether If-None-Match matches an ETag (weak comparison, RFC 9110 13.1.2). */
function matchesEtag(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/**
 * One legacy answer (`current`: of the caller's own address, `ip`): the
 * request's facts (format, detail, the address's hit) gathered here, the body
 * made by the snapshot's answerer (src/lookup/answerer.ts; synchronous unless
 * it waits on a crawler's DNS proof). Errors are thrown; the request path
 * renders them as text or JSON by the same negotiation (negotiation.ts).
 */
function legacy(services: AppServices, live: LiveSources, request: Request, query: LegacyQuery, ip: string | null, current: boolean): Response | Promise<Response> {
  // The Accept header is read only when no format is given (reading headers builds them all).
  const format = query.format?.toLowerCase();
  const text = format ? format === 'text' : wantsText(query.format, request.headers.get('accept'));
  if (format !== undefined && format !== 'text' && format !== 'json') {
    throw new ApiError('INVALID_REQUEST', 'format must be text or json', { provided: query.format, allowed: ['text', 'json'] });
  }
  // One serving snapshot for the whole answer, also after waiting for a proof (src/lookup/serving.ts).
  const snapshot = services.serving.snapshot;
  const hit = lookupOrThrow(services, callerIpOrThrow(ip), snapshot);
  const detail = query.detail === '1' || query.detail === 'true';
  const body = snapshot.answers.legacy(hit, { text, detail, current }, live);
  if (typeof body === 'string') return answer(request, current, text, body);
  return body.then((b) => answer(request, current, text, b));
}

/** A 200 (or 304 when If-None-Match matches on /{ip}) of a rendered body: one prebuilt header set, plus the ETag on /{ip}. */
function answer(request: Request, current: boolean, text: boolean, body: string): Response {
  const set = HEADER_SETS[text ? 'text' : 'json'];
  const headers = new Headers(current ? set.current : set.explicit);
  if (!current) {
    const etag = etagOf(text, body);
    headers.set('etag', etag);
    if (matchesEtag(request.headers.get('if-none-match'), etag)) {
      headers.delete('content-type');
      return new Response(null, { status: 304, headers });
    }
  }
  return new Response(body, { headers });
}

/** GET /{ip}: the address is the path's single segment, decoded once. */
export function legacyIp(services: AppServices): RouteHandler {
  const live = liveSourcesOf(services);
  return (request, path, hasQuery) => legacy(services, live, request, hasQuery ? legacyQuery(request.url) : NO_QUERY, lastSegmentParam(path), false);
}

/** GET /: the caller's own address. */
export function legacyCurrentIp(services: AppServices): RouteHandler {
  const live = liveSourcesOf(services);
  return (request, _path, hasQuery, caller) => legacy(services, live, request, hasQuery ? legacyQuery(request.url) : NO_QUERY, caller.ip, true);
}
