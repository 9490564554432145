/**
 * The one answer of GET /v1/ip/{ip} and GET /v1/ip/current (spec 2.1, 4.1,
 * 4.9): the v1 object, projected by `fields`, with the Pro RDAP include.
 *
 * Both routes' handlers (routes/lookup.ts) call `answer`. The fast case is
 * a condition here, not a second implementation: with no crawler proof to
 * wait for and no RDAP include, the answer is made synchronously from the
 * body memo (a projection is cut from the whole body); a proof to await or
 * an RDAP include take the async path.
 */
import type { LookupHit } from '../index/record.ts';
import { verifiedCrawlerOf } from '../crawlers/lookup-flags.ts';
import type { Projection } from '../lookup/projection.ts';
import type { ServingSnapshot } from '../lookup/serving.ts';
import { needsScoring } from '../lookup/v1.ts';
import { v1BodyText, type AnswerFacts } from '../lookup/v1-body.ts';
import { ownerFromRdap, type RdapResult } from '../rdap/index.ts';
import type { Tier } from '../tiers.ts';
import type { CrawlerProof } from '../crawlers/verifier.ts';
import { crawlerProofOf, lookupOrThrow } from './address-lookup.ts';
import { CORS_RESPONSE_HEADERS } from './cors.ts';
import { JSON_TYPE } from './errors.ts';
import type { AppServices } from './services.ts';
import { ProjectionMemo } from './projection-memo.ts';
import { ApiError } from '../errors.ts';
import { atOf, pastMomentOf, pastResponse } from './past-answer.ts';
import { withAsOf, type PastMoment } from '../lookup/past-moment.ts';

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

const emptyRdap: RdapResult = { available: false, network: null, contacts: [] };

/**
 * The lookup answerer of a set of services, for every entrance. It reads the
 * serving snapshot once per request and answers wholly from it (its index,
 * coverage, policy, overrides and memos), also after waiting for a proof.
 */
export class V1Pipeline {
  private readonly projections = new ProjectionMemo();
  constructor(private readonly services: AppServices) {}

  /**
   * The answer for an address text (as the path or the caller gives it).
   * `hasQuery`: the URL has a query string (read only then); `tier`: the
   * caller's; `current`: the caller's own address (never shared-cached).
   * Throws the spec's errors (INVALID_IP, INVALID_FIELDS, …) as ApiError.
   */
  answer(request: Request, ipText: string, hasQuery: boolean, tier: Tier, current: boolean): Response | Promise<Response> {
    if (hasQuery) {
      const at = atOf(request.url);
      if (at !== null) return this.past(request, ipText, at, tier, current);
    }
    const snapshot = this.services.serving.snapshot;
    const hit = lookupOrThrow(this.services, ipText, snapshot);
    if (hasQuery) return this.projected(request, snapshot, hit, tier, current);
    const proof = this.proofOf(snapshot, hit);
    if (proof instanceof Promise) return proof.then((p) => this.whole(snapshot, hit, p, current));
    return this.whole(snapshot, hit, proof, current);
  }

  /** The crawler proof of a hit (crawlerProofOf), without reading the row of a record the memo holds. */
  private proofOf(snapshot: ServingSnapshot, hit: LookupHit): CrawlerProof | null | Promise<CrawlerProof | null> {
    // A record the memo already answered wanted no DNS proof (only such records are memoised):
    // its row need not be read to ask again.
    return snapshot.bodies.holds(hit) ? this.services.crawlers.proofFor(hit) : crawlerProofOf(this.services, hit);
  }

  /** The whole v1 object. */
  private whole(snapshot: ServingSnapshot, hit: LookupHit, proof: CrawlerProof | null, current: boolean): Response {
    const body = snapshot.bodies.body(hit, this.facts(hit, proof, null));
    return new Response(body, { headers: current ? NOT_CACHEABLE_HEADERS : CACHEABLE_HEADERS });
  }

  /**
   * The answer to a request with a query: `fields` and `include` (repeated
   * parameters joined). Synchronous unless a crawler DNS proof or the RDAP
   * registry is awaited.
   */
  private projected(request: Request, snapshot: ServingSnapshot, hit: LookupHit, tier: Tier, current: boolean): Response | Promise<Response> {
    const projection = this.projections.ofUrl(request.url, V1_QUERY_KEYS, tier);
    if (projection.rdap && (projection.fields === null || projection.fields.has('rdap'))) return this.withRdap(snapshot, hit, projection, current);
    // ip/stack/location/routing alone never wait for a crawler DNS proof.
    if (!needsScoring(projection.fields)) return this.projection(snapshot, hit, null, projection, null, current);
    const proof = this.proofOf(snapshot, hit);
    if (proof instanceof Promise) return proof.then((p) => this.projection(snapshot, hit, p, projection, null, current));
    return this.projection(snapshot, hit, proof, projection, null, current);
  }

  /** An accepted include: the registry is asked before the body is built, so the answer's network.owner agrees with its rdap object. */
  private async withRdap(snapshot: ServingSnapshot, hit: LookupHit, projection: Projection, current: boolean): Promise<Response> {
    const proof = needsScoring(projection.fields) ? await crawlerProofOf(this.services, hit) : null;
    return this.projection(snapshot, hit, proof, projection, await this.services.rdap.lookup(hit.ip), current);
  }

  /** A projected body (the whole object when `fields` is absent). */
  private projection(snapshot: ServingSnapshot, hit: LookupHit, proof: CrawlerProof | null, projection: Projection, rdap: RdapResult | null, current: boolean): Response {
    const body = v1BodyText(snapshot.bodies, hit, this.facts(hit, proof, rdap), projection.fields, rdap);
    return new Response(body, { headers: current || projection.rdap ? NOT_CACHEABLE_HEADERS : CACHEABLE_HEADERS });
  }

  /** The answer as of a past moment (`?at=`): from the index served then, with no live part (past-answer.ts). */
  private past(request: Request, ipText: string, at: string, tier: Tier, current: boolean): Response | Promise<Response> {
    const moment = pastMomentOf(this.services, at, tier);
    if (moment instanceof Promise) return moment.then((m) => this.pastAnswer(request, ipText, m, tier, current));
    return this.pastAnswer(request, ipText, moment, tier, current);
  }

  private pastAnswer(request: Request, ipText: string, moment: PastMoment, tier: Tier, current: boolean): Response {
    const hit = lookupOrThrow(this.services, ipText, moment.snapshot);
    const projection = this.projections.ofUrl(request.url, V1_QUERY_KEYS, tier);
    if (projection.rdap) throw new ApiError('INVALID_INCLUDE', 'include=rdap_contacts is a live registry lookup: it has no answer as of a past moment', { include: ['rdap_contacts'], parameter: 'at' });
    const body = v1BodyText(moment.snapshot.bodies, hit, { verifiedCrawler: null, rdapOwner: null, now: moment.atMs }, projection.fields, null);
    return pastResponse(request, withAsOf(body, moment), moment, !current);
  }

  /**
   * What an answer adds to its snapshot: the crawler proof, the RDAP owner,
   * the clock. The owner is the registrant organization of the answer this
   * request fetched (Pro include), else of a cached one; ownerFromRdap never
   * yields a person.
   */
  private facts(hit: LookupHit, proof: CrawlerProof | null, fetched: RdapResult | null): AnswerFacts {
    return {
      verifiedCrawler: verifiedCrawlerOf(proof),
      rdapOwner: ownerFromRdap(fetched ?? this.services.rdap.peek(hit) ?? emptyRdap),
      now: this.services.now(),
    };
  }
}

const pipelines = new WeakMap<AppServices, V1Pipeline>();

/** The one pipeline of a set of services (both lookup routes share it). */
export function v1PipelineOf(services: AppServices): V1Pipeline {
  let pipeline = pipelines.get(services);
  if (pipeline === undefined) pipelines.set(services, (pipeline = new V1Pipeline(services)));
  return pipeline;
}
