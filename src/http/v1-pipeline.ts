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
const headersWith = (cacheControl: string) => new Headers({ ...CORS_RESPONSE_HEADERS, 'content-type': JSON_TYPE, 'cache-control': cacheControl });
const CACHEABLE_HEADERS = headersWith(CACHEABLE);
const NOT_CACHEABLE_HEADERS = headersWith(NOT_CACHEABLE);

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
   * Throws the spec's errors (INVALID_IP, INVALID_FIELDS, …) as ApiError.
   */
  answer(request: Request, ipText: string, hasQuery: boolean, tier: Tier, current: boolean): Response | Promise<Response> {
    let url = '';
    let projection: Projection | null = null;
    if (hasQuery) {
      url = request.url;
      // The caller's last query again is neither scanned for `at` nor parsed: only a current
      // answer's query is kept as the last (ProjectionMemo.lastOf), and `at` depends on the query alone.
      projection = this.projections.lastOf(url, tier);
      if (projection === null) {
        const at = atOf(url);
        if (at !== null) return this.past(request, ipText, at, tier, current);
      }
    }
    const snapshot = this.services.serving.snapshot;
    // The address is refused (INVALID_IP) before the fields are (INVALID_FIELDS).
    const hit = lookupOrThrow(this.services, ipText, snapshot);
    let body: string | Promise<string>;
    let headers = current ? NOT_CACHEABLE_HEADERS : CACHEABLE_HEADERS;
    if (!hasQuery) body = snapshot.answers.v1(hit, null, false, this.live);
    else {
      projection ??= this.projections.ofUrl(url, V1_QUERY_KEYS, tier);
      if (projection.rdap) headers = NOT_CACHEABLE_HEADERS;
      body = snapshot.answers.v1(hit, projection.fields, projection.rdap && (projection.fields === null || projection.fields.has('rdap')), this.live);
    }
    if (typeof body === 'string') return new Response(body, { headers });
    return body.then((text) => new Response(text, { headers }));
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
