/**
 * GET /v1/ip/current and GET /v1/ip/{ip} (spec 2.1, 4.1, 4.9): the v1
 * object, projected by `fields`, with the Pro RDAP include.
 */
import { Elysia, t } from 'elysia';
import { lookupCrawlerFlags, verifiedCrawlerOf } from '../../crawlers/lookup-flags.ts';
import type { LookupHit } from '../../index/record.ts';
import { parseProjection } from '../../lookup/projection.ts';
import { buildV1, needsScoring, type V1Context } from '../../lookup/v1.ts';
import { V1BodyCache } from '../../lookup/v1-body.ts';
import { ownerFromRdap, type RdapResult } from '../../rdap/index.ts';
import type { ScoringContext } from '../../scoring/index.ts';
import { callerOf } from '../caller.ts';
import { ApiError } from '../errors.ts';
import { CORS_RESPONSE_HEADERS } from '../cors.ts';
import type { AppServices } from '../services.ts';

/** How long a GET lookup may wait for a DNS crawler proof before answering without it. */
export const CRAWLER_PROOF_BUDGET_MS = 50;

/**
 * A path parameter as Elysia already percent-decoded it (decoding again would
 * turn `%2531` into `1`). Elysia gives null for a segment that does not
 * decode (`%ZZ`); the route then sees the raw segment and refuses it itself.
 */
export function pathParam(v: string | null | undefined, request: Request): string {
  return typeof v === 'string' ? v : rawLastSegment(request.url);
}

/** The last path segment of a URL, undecoded. */
export function rawLastSegment(url: string): string {
  const path = new URL(url).pathname;
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The spec's INVALID_IP error for a text. */
export function invalidIp(text: string): ApiError {
  return new ApiError('INVALID_IP', `Not a valid IPv4 or IPv6 address: ${text.slice(0, 100)}`, { provided: text });
}

/** Looks up an address text or throws INVALID_IP with the text provided. */
export function lookupOrThrow(s: AppServices, ip: string): LookupHit {
  const hit = s.index.current.lookup(ip);
  if (!hit) throw invalidIp(ip);
  s.metrics.lookup(hit.family);
  return hit;
}

/** The caller-independent crawler proof context of a hit (may start a bounded DNS check). */
export async function scoringContextFor(s: AppServices, hit: LookupHit) {
  const proof = await s.crawlers.startProof(hit.ip, hit, CRAWLER_PROOF_BUDGET_MS);
  return { verifiedCrawler: lookupCrawlerFlags(hit, proof).verifiedCrawler, coverage: s.index.coverage };
}

/** Every value of a query parameter, in order (Elysia's parsed query keeps only the last of a repeated key). */
export function queryAll(request: Request, name: string): string[] {
  return new URL(request.url).searchParams.getAll(name);
}

/** `fields` and `include` with repeated parameters joined, so `fields=ip&fields=stack` means both. */
function projectionQuery(query: Record<string, unknown>, request: Request): { fields?: unknown; include?: unknown } {
  if (query.fields === undefined && query.include === undefined) return {}; // the common case: no URL re-parse
  const fields = queryAll(request, 'fields');
  const include = queryAll(request, 'include');
  return { fields: fields.length ? fields : undefined, include: include.length ? include : undefined };
}

async function answer(
  s: AppServices,
  bodies: V1BodyCache,
  ip: string,
  query: Record<string, unknown>,
  request: Request,
  current: boolean,
  set: { headers: Record<string, string | number> },
) {
  const hit = lookupOrThrow(s, ip);
  const projection = parseProjection(projectionQuery(query, request), callerOf(request).tier);
  // ip/stack/location/routing alone never wait for a crawler DNS proof.
  const scoring = needsScoring(projection.fields) ? await scoringContextFor(s, hit) : UNSCORED;
  // An accepted include asks the registry before the body is built, so the answer's network.owner agrees with its rdap object.
  const rdap = projection.rdap && (projection.fields === null || projection.fields.has('rdap')) ? await s.rdap.lookup(hit.ip) : null;
  const ctx = v1Context(s, hit, scoring, rdap);
  const cacheControl = current || projection.rdap ? 'no-store' : 'public, max-age=86400';
  if (projection.fields === null && !projection.rdap) {
    // The common case, the whole object, composed from parts (its scored part shared per scoring view).
    // Returned as text with headers on `set`: cheaper in Elysia than a Response it must merge CORS headers into.
    set.headers['content-type'] = 'application/json;charset=utf-8';
    set.headers['cache-control'] = cacheControl;
    return bodies.body(hit, ctx);
  }
  const body = buildV1(hit, ctx, projection.fields);
  if (rdap !== null) body.rdap = rdap;
  set.headers['cache-control'] = cacheControl;
  return body;
}

/**
 * The inputs of a v1 object besides the hit: policy, RDAP owner, clock. The
 * owner is the registrant organization of the answer this request fetched
 * (Pro include), else of a cached one; ownerFromRdap never yields a person.
 */
function v1Context(s: AppServices, hit: LookupHit, scoring: ScoringContext, fetched: RdapResult | null = null): V1Context {
  return { scoring, policy: s.policy.current, rdapOwner: ownerFromRdap(fetched ?? s.rdap.peek(hit.ip) ?? emptyRdap), now: s.now() };
}

/** Never read: buildV1 only consults the scoring context for fields needsScoring() names. */
const UNSCORED: ScoringContext = { verifiedCrawler: null };

const emptyRdap: RdapResult = { available: false, network: null, contacts: [] };

const query = t.Object({ fields: t.Optional(t.Any()), include: t.Optional(t.Any()) }, { additionalProperties: true });

/** The v1 lookup routes. */
export function lookupRoutes(s: AppServices) {
  const bodies = new V1BodyCache();
  return new Elysia({ name: 'lookup' })
    .get(
      '/v1/ip/current',
      ({ request, query, set }) => {
        const ip = callerOf(request).ip;
        if (!ip) throw new ApiError('NO_CLIENT_IP', 'The caller IP address cannot be determined', {});
        return answer(s, bodies, ip, query, request, true, set);
      },
      { query },
    )
    .get('/v1/ip/:ip', ({ params, request, query, set }) => answer(s, bodies, pathParam(params.ip, request), query, request, false, set), {
      query,
      params: t.Object({ ip: t.String({ description: 'IPv4 or IPv6 address' }) }),
    });
}

/**
 * Headers of a whole-object answer: the CORS plugin's, JSON, cacheable (spec
 * 4.9). One Headers object for every answer: a Response copies it (so adding
 * rate-limit headers to one answer never touches it), and copying a Headers
 * costs less than building one from a plain object each time.
 */
const WHOLE_OBJECT_HEADERS = new Headers({
  ...CORS_RESPONSE_HEADERS,
  'content-type': 'application/json;charset=utf-8',
  'cache-control': 'public, max-age=86400',
});

/**
 * GET /v1/ip/{ip} without a query string, answered before the framework and
 * without awaiting anything: the hot route of the API. Routing, hooks and
 * response assembly in Elysia cost several times the lookup itself
 * (BENCHMARKS.md). It gives what the Elysia route gives (same context, same
 * body, the headers the CORS plugin adds); anything else (a query, an
 * encoded or odd path, another method, an invalid address, an address whose
 * crawler range wants a DNS proof) returns null for the app to answer. That
 * both give the same bytes is tested (test/http/fast-path.test.ts).
 */
export function lookupFastPath(s: AppServices) {
  const bodies = new V1BodyCache();
  /** `url` is request.url, read once by the caller (each read makes a new string). */
  return function fastLookup(request: Request, url: string, path: string): Response | null {
    if (request.method !== 'GET' || url.includes('?') || !path.startsWith('/v1/ip/')) return null;
    const ip = path.slice('/v1/ip/'.length);
    if (ip === '' || ip === 'current' || ip.includes('/') || ip.includes('%')) return null;
    const hit = s.index.current.lookup(ip);
    if (!hit) return null;
    // A DNS proof may take up to CRAWLER_PROOF_BUDGET_MS: the route awaits it. A record
    // this memo already answered wanted none (only such records get here to be
    // memoised, and the index is the same), so its row need not be read to ask again.
    if (!bodies.holds(hit) && s.crawlers.wantsProof(hit)) return null;
    s.metrics.lookup(hit.family);
    const scoring = { verifiedCrawler: verifiedCrawlerOf(s.crawlers.proofFor(hit.ip)), coverage: s.index.coverage };
    return new Response(bodies.body(hit, v1Context(s, hit, scoring)), { headers: WHOLE_OBJECT_HEADERS });
  };
}
