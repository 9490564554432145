/**
 * The one answer of GET /v1/ip/{ip} and GET /v1/ip/current (spec 2.1, 4.1,
 * 4.9): the v1 object, projected by `fields`, with the Pro RDAP include.
 *
 * Both routes' handlers (routes/lookup.ts) call `answer`. This module only
 * gathers the request's facts (the address's hit, the parsed `fields` and
 * `include`, a past moment) and renders the body the snapshot's answerer
 * returns (src/lookup/answerer.ts, which chooses memo, cut or fresh build and
 * what to wait for); a body that is not waited for is answered synchronously.
 */
import type { LiveSources } from '../lookup/answerer.ts';
import type { RdapResult } from '../rdap/index.ts';
import { withAsOf, type PastMoment } from '../lookup/past-moment.ts';
import type { Tier } from '../tiers.ts';
import { ApiError } from '../api-error.ts';
import { liveSourcesOf, lookupOrThrow } from './address-lookup.ts';
import { CORS_RESPONSE_HEADERS } from './cors.ts';
import { JSON_TYPE } from './error-response.ts';
import { atOf, pastMomentOf, pastResponse } from './past-answer.ts';
import { ProjectionMemo } from './projection-memo.ts';
import type { Projection } from '../lookup/projection.ts';
import type { AppServices } from './services.ts';
import { applyRateLimitHeaders, rateLimitHeaders, shouldSendRateLimitHeaders, type RateDecision } from './ratelimit/index.ts';

/** The query parameters of a lookup (spec 4.1). */
const V1_QUERY_KEYS: readonly [string, string] = ['fields', 'include'];

/** An explicit address's answer is the same for every caller: shared-cacheable (spec 4.9). */
const CACHEABLE = 'public, max-age=86400';
/** The caller's own address, or an answer with the Pro include: never shared. */
const NOT_CACHEABLE = 'no-store';

/**
 * Headers of an answer (the CORS headers of every answer, cors.ts;
 * JSON, its caching): one Headers object each, since a Response copies it
 * (so adding rate-limit headers to one answer never touches it), and copying
 * a Headers costs less than building one from a plain object each time.
 */
const headersWith = (cacheControl: string) => ({ ...CORS_RESPONSE_HEADERS, 'content-type': JSON_TYPE, 'cache-control': cacheControl });
const CACHEABLE_HEADERS = new Headers(headersWith(CACHEABLE));
const NOT_CACHEABLE_HEADERS = new Headers(headersWith(NOT_CACHEABLE));
/** Whether a 200 with each Cache-Control carries the rate-limit headers (spec 8, ratelimit/headers.ts decides). */
const CACHEABLE_RATED = shouldSendRateLimitHeaders(200, CACHEABLE);
const NOT_CACHEABLE_RATED = shouldSendRateLimitHeaders(200, NOT_CACHEABLE);

/**
 * A 200 with a body: the prebuilt header set, or with `limit` (an admitted
 * caller's decision) and an answer that carries them, that set and the four
 * rate-limit headers after it, in one header object: the request path never
 * reads an answer's headers back to add them (the route's `ratesItself`).
 */
function answerOf(body: string, cacheable: boolean, limit: RateDecision | null): Response {
  if (limit === null || !(cacheable ? CACHEABLE_RATED : NOT_CACHEABLE_RATED)) return new Response(body, { headers: cacheable ? CACHEABLE_HEADERS : NOT_CACHEABLE_HEADERS });
  return new Response(body, { headers: { ...headersWith(cacheable ? CACHEABLE : NOT_CACHEABLE), ...rateLimitHeaders(limit) } });
}

/**
 * The lookup pipeline of a set of services, for every entrance. It reads the
 * serving snapshot once per request and has its answerer answer wholly from
 * it (its index, coverage, policy, overrides and memos), also after waiting
 * for a proof.
 */
export class V1Pipeline {
  private readonly projections = new ProjectionMemo();
  /** Where the answerer asks the live facts (crawler proof, RDAP owner, clock). */
  private readonly live: LiveSources<RdapResult>;
  constructor(private readonly services: AppServices) {
    this.live = liveSourcesOf(services);
  }

  /**
   * The answer for an address text (as the path or the caller gives it).
   * `hasQuery`: the URL has a query string (read only then); `tier`: the
   * caller's; `current`: the caller's own address (never shared-cached).
   * `limit`: the caller's admitted rate decision, whose headers the answer
   * carries where spec 8 says (null: none taken).
   * Throws the spec's errors (INVALID_IP, INVALID_FIELDS, …) as ApiError.
   */
  answer(request: Request, ipText: string, hasQuery: boolean, tier: Tier, current: boolean, limit: RateDecision | null): Response | Promise<Response> {
    let url = '';
    let projection: Projection | null = null;
    if (hasQuery) {
      url = request.url;
      // The caller's last query again is neither scanned for `at` nor parsed: only a current
      // answer's query is kept as the last (ProjectionMemo.lastOf), and `at` depends on the query alone.
      projection = this.projections.lastOf(url, tier);
      if (projection === null) {
        const at = atOf(url);
        if (at !== null) {
          if (limit === null) return this.past(request, ipText, at, tier, current);
          // Rare: a past answer's headers are read back to add the rate-limit headers.
          const rated = (r: Response) => (applyRateLimitHeaders(r.headers, limit, r.status), r);
          const past = this.past(request, ipText, at, tier, current);
          return past instanceof Promise ? past.then(rated) : rated(past);
        }
      }
    }
    const snapshot = this.services.serving.snapshot;
    // The address is refused (INVALID_IP) before the fields are (INVALID_FIELDS).
    const hit = lookupOrThrow(this.services, ipText, snapshot);
    let body: string | Promise<string>;
    let cacheable = !current;
    if (!hasQuery) body = snapshot.answers.v1(hit, null, false, this.live);
    else {
      projection ??= this.projections.ofUrl(url, V1_QUERY_KEYS, tier);
      if (projection.rdap) cacheable = false;
      body = snapshot.answers.v1(hit, projection.fields, projection.rdap && (projection.fields === null || projection.fields.has('rdap')), this.live);
    }
    if (typeof body === 'string') return answerOf(body, cacheable, limit);
    return body.then((text) => answerOf(text, cacheable, limit));
  }

  /** The answer as of a past moment (`?at=`): from the index served then, with no live part (past-answer.ts). */
  private past(request: Request, ipText: string, at: string, tier: Tier, current: boolean): Response | Promise<Response> {
    const moment = pastMomentOf(this.services, at, tier);
    if (moment instanceof Promise) return moment.then((m) => this.pastAnswer(request, ipText, m, tier, current));
    return this.pastAnswer(request, ipText, moment, tier, current);
  }

  private pastAnswer(request: Request, ipText: string, moment: PastMoment, tier: Tier, current: boolean): Response {
    const hit = lookupOrThrow(this.services, ipText, moment.snapshot);
    // Not kept as the last query: `lastOf` answers only queries without `at`.
    const projection = this.projections.ofUrl(request.url, V1_QUERY_KEYS, tier, false);
    if (projection.rdap) throw new ApiError('INVALID_INCLUDE', 'include=rdap_contacts is a live registry lookup: it has no answer as of a past moment', { include: ['rdap_contacts'], parameter: 'at' });
    const body = moment.snapshot.answers.v1WithoutLiveParts(hit, projection.fields, moment.atMs);
    return pastResponse(request, withAsOf(body, moment), moment, !current);
  }
}

const pipelines = new WeakMap<AppServices, V1Pipeline>();

/** The one pipeline of a set of services (both lookup routes share it). */
export function v1PipelineOf(services: AppServices): V1Pipeline {
  let pipeline = pipelines.get(services);
  if (pipeline === undefined) pipelines.set(services, (pipeline = new V1Pipeline(services)));
  return pipeline;
}
