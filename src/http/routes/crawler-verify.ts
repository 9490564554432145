/**
 * POST /v1/crawler/verify (spec 2.4, 4.3) as an Elysia plugin. The body is
 * read by hand (parse: 'none') so every malformed request gets the spec's
 * error shape rather than the framework's.
 */
import { Elysia } from 'elysia';
import type { LookupHit } from '../../index/record.ts';
import { crawlerVerifyBody } from '../../crawlers/response.ts';
import type { CrawlerVerifier } from '../../crawlers/verifier.ts';
import { readVerifyRequest } from '../../crawlers/verify-request.ts';

export interface CrawlerVerifyDeps {
  /** The index lookup; null for text that is not an address. */
  lookup: (ip: string) => LookupHit | null;
  verifier: CrawlerVerifier;
}

/** Registers POST /v1/crawler/verify; errors are thrown as ApiError for the app's error hook. */
export function crawlerVerifyRoutes(deps: CrawlerVerifyDeps) {
  return new Elysia({ name: 'crawler-verify' }).post(
    '/v1/crawler/verify',
    async ({ request, set }) => {
      const { ip, userAgent } = await readVerifyRequest(request);
      const hit = deps.lookup(ip);
      const verification = await deps.verifier.verify({ ip, userAgent, hit });
      // The answer depends on the caller's User-Agent and on live DNS: never shared-cached (spec 4.9).
      set.headers['cache-control'] = 'no-store';
      return crawlerVerifyBody(ip, userAgent, verification, hit);
    },
    { parse: 'none' },
  );
}
