/**
 * The one answer of GET /v1/ip/{ip} and GET /v1/ip/current (spec 2.1, 4.1,
 * 4.9): the v1 object, projected by `fields`, with the Pro RDAP include.
 *
 * Every entrance calls `answer`: the request wrapper (server.ts) for a GET,
 * before the framework, and the Elysia routes (routes/lookup.ts) for what
 * reaches the app. The fast case is a condition here, not a second
 * implementation: without a query string and with no crawler proof to wait
 * for, the whole object is answered synchronously from the body memo; a
 * query, a proof to await or an RDAP include take the general, async path.
 */
import type { LookupHit } from '../index/record.ts';
import { verifiedCrawlerOf } from '../crawlers/lookup-flags.ts';
import { parseProjection } from '../lookup/projection.ts';
import type { ServingSnapshot } from '../lookup/serving.ts';
import { needsScoring } from '../lookup/v1.ts';
import { v1BodyText, type AnswerFacts } from '../lookup/v1-body.ts';
import { ownerFromRdap, type RdapResult } from '../rdap/index.ts';
import type { Tier } from '../tiers.ts';
import type { CrawlerProof } from '../crawlers/verifier.ts';
import { crawlerProofOf, lookupOrThrow } from './address-lookup.ts';
import { CORS_RESPONSE_HEADERS } from './cors.ts';
import type { AppServices } from './services.ts';

/** The route label (route-table.ts) of an explicit lookup, the route the request wrapper hands to the pipeline. */
export const V1_LOOKUP_ROUTE = '/v1/ip/{ip}';

const JSON_TYPE = 'application/json;charset=utf-8';
/** An explicit address's answer is the same for every caller: shared-cacheable (spec 4.9). */
const CACHEABLE = 'public, max-age=86400';
/** The caller's own address, or an answer with the Pro include: never shared. */
const NOT_CACHEABLE = 'no-store';

/**
 * Headers of an answer (the CORS headers the plugin puts on every answer,
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
  constructor(private readonly services: AppServices) {}

  /**
   * The answer for an address text (as the path or the caller gives it).
   * `hasQuery`: the URL has a query string (read only then); `tier`: the
   * caller's; `current`: the caller's own address (never shared-cached).
   * Throws the spec's errors (INVALID_IP, INVALID_FIELDS, …) as ApiError.
   */
  answer(request: Request, ipText: string, hasQuery: boolean, tier: Tier, current: boolean): Response | Promise<Response> {
    const snapshot = this.services.serving.snapshot;
    const hit = lookupOrThrow(this.services, ipText, snapshot);
    if (hasQuery) return this.projected(request, snapshot, hit, tier, current);
    // A record the memo already answered wanted no DNS proof (only such records are memoised):
    // its row need not be read to ask again.
    const proof = snapshot.bodies.holds(hit) ? this.services.crawlers.proofFor(hit) : crawlerProofOf(this.services, hit);
    if (proof instanceof Promise) return proof.then((p) => this.whole(snapshot, hit, p, current));
    return this.whole(snapshot, hit, proof, current);
  }

  /** The whole v1 object. */
  private whole(snapshot: ServingSnapshot, hit: LookupHit, proof: CrawlerProof | null, current: boolean): Response {
    const body = snapshot.bodies.body(hit, this.facts(hit, proof, null));
    return new Response(body, { headers: current ? NOT_CACHEABLE_HEADERS : CACHEABLE_HEADERS });
  }

  /** The answer to a request with a query: `fields` and `include` (repeated parameters joined). */
  private async projected(request: Request, snapshot: ServingSnapshot, hit: LookupHit, tier: Tier, current: boolean): Promise<Response> {
    const query = new URL(request.url).searchParams;
    const fields = query.getAll('fields');
    const include = query.getAll('include');
    const projection = parseProjection({ fields: fields.length ? fields : undefined, include: include.length ? include : undefined }, tier);
    // ip/stack/location/routing alone never wait for a crawler DNS proof.
    const proof = needsScoring(projection.fields) ? await crawlerProofOf(this.services, hit) : null;
    // An accepted include asks the registry before the body is built, so the answer's network.owner agrees with its rdap object.
    const rdap = projection.rdap && (projection.fields === null || projection.fields.has('rdap')) ? await this.services.rdap.lookup(hit.ip) : null;
    const body = v1BodyText(snapshot.bodies, hit, this.facts(hit, proof, rdap), projection.fields, rdap);
    return new Response(body, { headers: current || projection.rdap ? NOT_CACHEABLE_HEADERS : CACHEABLE_HEADERS });
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

/** The one pipeline of a set of services (the app's routes and the request wrapper share it). */
export function v1PipelineOf(services: AppServices): V1Pipeline {
  let pipeline = pipelines.get(services);
  if (pipeline === undefined) pipelines.set(services, (pipeline = new V1Pipeline(services)));
  return pipeline;
}
