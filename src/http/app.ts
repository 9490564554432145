/**
 * The Elysia application: every route of the spec, CORS, OpenAPI at
 * /openapi.json with a docs page at /docs, and one error hook that renders
 * every failure in the spec's error shape.
 */
import { Elysia } from 'elysia';
import { corsPlugin } from './cors.ts';
import { crawlerVerifyRoutes } from './routes/crawler-verify.ts';
import { authRoutes } from './routes/auth.ts';
import { dashboardRoutes } from './routes/dashboard.ts';
import { ApiError, errorResponse } from './errors.ts';
import type { AppServices } from './services.ts';
import { loadDocsSite, type DocsSite } from './docs/page.ts';
import { openApiJson } from './openapi/document.ts';
import { oauthSetup } from '../accounts/oauth/providers.ts';
import { asnRoutes, invalidAsn } from './routes/asn.ts';
import { assessmentRoutes } from './routes/assessment.ts';
import { legacyRoutes } from './routes/legacy.ts';
import { invalidIp, lookupRoutes, rawLastSegment } from './routes/lookup.ts';
import { opsRoutes } from './routes/ops.ts';

/**
 * The route's own error for a path parameter Elysia refused: a segment that
 * does not percent-decode arrives as null and fails the params schema.
 */
function pathParamError(request: Request): ApiError | null {
  const path = new URL(request.url).pathname;
  if (path.startsWith('/v1/ip/')) return invalidIp(rawLastSegment(request.url));
  if (path.startsWith('/v1/asn/') || path.startsWith('/asn/')) return invalidAsn(rawLastSegment(request.url));
  return null;
}

/** Maps any thrown value to the spec's error response (never a stack trace). */
export function toErrorResponse(code: string | number, error: unknown, request?: Request): Response {
  if (error instanceof ApiError) return errorResponse(error);
  if (code === 'VALIDATION' && request && (error as { type?: unknown }).type === 'params') {
    const mapped = pathParamError(request);
    if (mapped) return errorResponse(mapped);
  }
  if (code === 'NOT_FOUND') return errorResponse(new ApiError('NOT_FOUND', 'No such endpoint or resource', {}));
  if (code === 'PARSE') return errorResponse(new ApiError('INVALID_REQUEST', 'The request body could not be parsed', {}));
  if (code === 'VALIDATION') return errorResponse(new ApiError('INVALID_REQUEST', 'The request does not match what the route takes', {}));
  if (code === 'INVALID_COOKIE_SIGNATURE') return errorResponse(new ApiError('UNAUTHORIZED', 'Invalid session cookie', {}));
  console.error(`internal error: ${error instanceof Error ? error.name + ': ' + error.message : String(error)}`);
  return errorResponse(new ApiError('INTERNAL_ERROR', 'Unexpected server error', {}));
}

/** Builds the application over its services. */
export function createApp(s: AppServices) {
  // The OpenAPI document and the reference page's files are made on first
  // request: start-up does not pay for them.
  const oauth = oauthSetup(s.config.oauth).enabled;
  let docs: Promise<DocsSite> | null = null;
  const serveDocs = async ({ path }: { path: string }) => {
    const answer = (await (docs ??= loadDocsSite())).answer(path);
    if (!answer) throw new ApiError('NOT_FOUND', 'No such endpoint or resource', {});
    return answer;
  };
  const serveOpenApi = () => new Response(openApiJson({ oauth }), { headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' } });
  return (
    // Elysia's default finds the path by searching for "/" from the 11th
    // character of the URL, assuming a host of 4+ characters; `Host: api`
    // (a service on port 80) was then routed by the wrong path. Bun.serve
    // here is plain http, so the search may start right after "http://".
    new Elysia({ handler: { standardHostname: false } })
      .onError(({ code, error, request }) => toErrorResponse(code, error, request))
      .use(corsPlugin())
      // The CORS plugin marks every answer `Vary: *` for origin '*', which no shared
      // cache can ever match: it would void the public caching of spec 4.9. Answers do
      // not vary by Origin here (always '*'); routes that vary by Accept say so themselves.
      .onRequest(({ set }) => {
        if (set.headers.vary === '*') delete set.headers.vary;
      })
      // Generated from the declared answer shapes (openapi/document.ts); the reference page reads it (docs/page.ts).
      .get('/openapi.json', serveOpenApi)
      .get('/docs', serveDocs)
      .get('/docs/*', serveDocs)
      .use(createRoutesOnly(s))
  );
}

/** The routes alone (no CORS, no docs). */
function createRoutesOnly(s: AppServices) {
  return new Elysia({ handler: { standardHostname: false } })
    .use(opsRoutes(s))
    .use(lookupRoutes(s))
    .use(assessmentRoutes(s))
    .use(asnRoutes(s))
    .use(crawlerVerifyRoutes({ lookup: (ip) => s.index.current.lookup(ip), verifier: s.crawlers }))
    .use(authRoutes({ config: s.config, accounts: s.accounts, now: s.now }))
    .use(dashboardRoutes({ config: s.config, accounts: s.accounts, now: s.now }))
    // The legacy /{ip} catch-all goes last so every static route wins.
    .use(legacyRoutes(s));
}

export type App = ReturnType<typeof createApp>;
