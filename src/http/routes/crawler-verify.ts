/**
 * POST /v1/crawler/verify (spec 2.4, 4.3). The body is read by hand so every
 * malformed request gets the spec's error shape.
 */
import type { LookupHit } from '../../index/record.ts';
import { lookupAddress } from '../../lookup/overrides/overlay.ts';
import { crawlerVerifyBody } from '../../crawlers/response.ts';
import type { CrawlerVerifier } from '../../crawlers/verifier.ts';
import { readVerifyRequest } from '../../crawlers/verify-request.ts';
import { jsonResponse } from '../json-response.ts';
import type { RouteHandler } from '../route-table.ts';
import type { AppServices } from '../services.ts';

export interface CrawlerVerifyDeps {
  /** The index lookup; null for text that is not an address. */
  lookup: (ip: string) => LookupHit | null;
  verifier: CrawlerVerifier;
}

/** The answer to a verification request; errors are thrown as ApiError. */
export function crawlerVerifyAnswer(deps: CrawlerVerifyDeps): (request: Request) => Promise<Response> {
  return async (request) => {
    const { ip, userAgent } = await readVerifyRequest(request);
    const hit = deps.lookup(ip);
    const verification = await deps.verifier.verify({ ip, userAgent, hit });
    // The answer depends on the caller's User-Agent and on live DNS: never shared-cached (spec 4.9).
    return jsonResponse(crawlerVerifyBody(ip, userAgent, verification, hit), { 'cache-control': 'no-store' });
  };
}

/** POST /v1/crawler/verify over the served index and its overrides. */
export function verifyCrawler(services: AppServices): RouteHandler {
  const lookup = (ip: string) => {
    const snapshot = services.serving.snapshot;
    return lookupAddress(snapshot.reader, snapshot.overrides, ip);
  };
  return crawlerVerifyAnswer({ lookup, verifier: services.crawlers });
}
