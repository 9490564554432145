/**
 * Legacy GET / and GET /{ip} (spec 4.6, 4.9): the flat legacy JSON, or
 * plain text by `format=text` / Accept, with a strong ETag on /{ip}.
 */
import { Elysia, t } from 'elysia';
import { legacyObject, legacyPlace, legacyText } from '../../lookup/legacy.ts';
import { callerOf } from '../caller.ts';
import { ApiError } from '../../errors.ts';
import { CORS_RESPONSE_HEADERS } from '../cors.ts';
import { textErrorResponse, wantsText } from '../negotiation.ts';
import type { AppServices } from '../services.ts';
import { lookupOrThrow, scoringContextFor } from '../address-lookup.ts';
import { pathParam } from '../request-params.ts';

const CURRENT_CACHE = 'no-store, no-cache, must-revalidate';
const EXPLICIT_CACHE = 'public, max-age=86400';
const TEXT_TYPE = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

/** Hash seeds per media type, so an ETag covers the type without hashing it with every body. */
const TEXT_SEED = BigInt(Bun.hash.wyhash(TEXT_TYPE));
const JSON_SEED = BigInt(Bun.hash.wyhash(JSON_TYPE));

/** A strong validator over the exact bytes and their media type. */
function etagOf(text: boolean, body: string): string {
  return `"${Bun.hash.wyhash(body, text ? TEXT_SEED : JSON_SEED).toString(16)}"`;
}

/**
 * The four header sets of a legacy answer (media type x caching), with the
 * CORS headers the app's plugin would add. A Response copies the Headers it
 * is given, and copying one costs about half of building it.
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
 * One legacy answer. Synchronous for one-line text: that line reads the
 * record alone, so it neither scores nor waits on a crawler's DNS proof (the
 * operator and domain, which do, are only in the JSON and the detail text).
 */
function legacy(s: AppServices, request: Request, query: Record<string, string | undefined>, ipText: string | null): Response | Promise<Response> {
  // The Accept header is read only when no format is given (reading headers builds them all).
  const format = query.format?.toLowerCase();
  const text = format ? format === 'text' : wantsText(query.format, request.headers.get('accept'));
  const current = ipText === null;
  try {
    if (format !== undefined && format !== 'text' && format !== 'json') {
      throw new ApiError('INVALID_REQUEST', 'format must be text or json', { provided: query.format, allowed: ['text', 'json'] });
    }
    const ip = ipText ?? callerOf(request).ip;
    if (!ip) throw new ApiError('NO_CLIENT_IP', 'The caller IP address cannot be determined', {});
    // One serving snapshot for the whole answer, also after waiting for a proof (src/lookup/serving.ts).
    const snapshot = s.serving.snapshot;
    const hit = lookupOrThrow(s, ip, snapshot);
    const detail = query.detail === '1' || query.detail === 'true';
    if (text && !detail) return answer(request, current, text, current ? legacyText(legacyPlace(hit), false, true) : snapshot.lines.line(hit));
    return scoringContextFor(s, hit, snapshot).then(
      (scoring) => {
        const obj = legacyObject(hit, { scoring, policy: snapshot.policy }, s.now());
        return answer(request, current, text, text ? legacyText(obj, detail, current) : JSON.stringify(obj));
      },
      (e: unknown) => failure(e, text),
    );
  } catch (e) {
    return failure(e, text);
  }
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

/** Text errors keep the JSON route's status: one line "error: <message>"; anything else is thrown on. */
function failure(e: unknown, text: boolean): Response {
  if (!(e instanceof ApiError) || !text) throw e;
  const response = textErrorResponse(e);
  for (const name in CORS_RESPONSE_HEADERS) response.headers.set(name, CORS_RESPONSE_HEADERS[name]);
  return response;
}

/** The route label of the legacy explicit lookup (route-table.ts). */
export const LEGACY_LOOKUP_ROUTE = '/{ip}';

/**
 * `format` and `detail` of a URL's query; the last of a repeated key counts,
 * as in Elysia's parsed query. A query with nothing encoded is split by hand
 * (no URL parse on the text route's path); anything else as URLSearchParams reads it.
 */
export function legacyQuery(url: string): Record<string, string | undefined> {
  const q = url.indexOf('?');
  if (q < 0) return NO_QUERY;
  const text = url.slice(q + 1);
  if (text.includes('%') || text.includes('+')) {
    const params = new URLSearchParams(text);
    return { format: params.getAll('format').at(-1), detail: params.getAll('detail').at(-1) };
  }
  let format: string | undefined;
  let detail: string | undefined;
  // Pairs read in place (no array of pairs): [at, end) is one `key[=value]`.
  for (let at = 0; at <= text.length; ) {
    let end = text.indexOf('&', at);
    if (end < 0) end = text.length;
    const eq = text.indexOf('=', at);
    const keyEnd = eq < 0 || eq > end ? end : eq;
    const value = keyEnd === end ? '' : text.slice(keyEnd + 1, end);
    if (keyEnd - at === 6 && text.startsWith('format', at)) format = value;
    else if (keyEnd - at === 6 && text.startsWith('detail', at)) detail = value;
    at = end + 1;
  }
  return { format, detail };
}

const NO_QUERY: Record<string, string | undefined> = Object.freeze({});

/**
 * `GET /{ip}` as the request path answers it before the framework (as the
 * v1 pipeline does for its route): the same `legacy` answer the app's route
 * gives. A thrown ApiError is the caller's to render.
 */
export function legacyLookupResponse(s: AppServices, request: Request, ipText: string, hasQuery: boolean): Response | Promise<Response> {
  return legacy(s, request, hasQuery ? legacyQuery(request.url) : NO_QUERY, ipText);
}

const query = t.Object(
  { format: t.Optional(t.String()), detail: t.Optional(t.String()) },
  { additionalProperties: true },
);

/** The legacy routes (register last: /{ip} is a catch-all). */
export function legacyRoutes(s: AppServices) {
  return new Elysia({ name: 'legacy' })
    .get('/', ({ request, query }) => legacy(s, request, query as Record<string, string | undefined>, null), {
      query,
    })
    .get('/:ip', ({ request, params, query }) => legacy(s, request, query as Record<string, string | undefined>, pathParam(params.ip, request)), {
      query,
    });
}
