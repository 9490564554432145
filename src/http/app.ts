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
import { ApiError } from '../errors.ts';
import { errorResponse } from './errors.ts';
import type { AppServices } from './services.ts';
import { loadDocsSite, type DocsSite } from './docs/page.ts';
import { openApiJson } from './openapi/document.ts';
import { oauthSetup } from '../accounts/oauth/providers.ts';
import { invalidAsn } from '../lookup/asn.ts';
import { lookupAddress } from '../lookup/overrides/overlay.ts';
import { asnRoutes } from './routes/asn.ts';
import { assessmentRoutes } from './routes/assessment.ts';
import { legacyRoutes } from './routes/legacy.ts';
import { invalidIp } from './address-lookup.ts';
import { rawLastSegment } from './request-params.ts';
import { routeTableOf, type RouteTable } from './route-table.ts';
import { lookupRoutes } from './routes/lookup.ts';
import { V1_LOOKUP_ROUTE } from './v1-pipeline.ts';
import { opsRoutes } from './routes/ops.ts';

/** The error of each route whose path parameter can be refused by the router, by route label. */
const PARAM_ERRORS: Readonly<Record<string, (text: string) => ApiError>> = {
  [V1_LOOKUP_ROUTE]: invalidIp,
  '/v1/asn/{asn}': invalidAsn,
  '/asn/{asn}': invalidAsn,
};

/**
 * The route's own error for a path parameter Elysia refused: a segment that
 * does not percent-decode arrives as null and fails the params schema.
 */
function pathParamError(request: Request, routes: RouteTable): ApiError | null {
  const entry = routes.match(new URL(request.url).pathname);
  const make = entry === null ? undefined : PARAM_ERRORS[entry.label];
  return make === undefined ? null : make(rawLastSegment(request.url));
}

/** Maps any thrown value to the spec's error response (never a stack trace); `routes` names the route of a refused path parameter. */
export function toErrorResponse(code: string | number, error: unknown, request?: Request, routes?: RouteTable): Response {
  if (error instanceof ApiError) return errorResponse(error);
  if (code === 'VALIDATION' && request && routes && (error as { type?: unknown }).type === 'params') {
    const mapped = pathParamError(request, routes);
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
  // The error hook reads the app's own route table, once the app is built.
  let routes: RouteTable | undefined;
  const app =
    // Elysia's default finds the path by searching for "/" from the 11th
    // character of the URL, assuming a host of 4+ characters; `Host: api`
    // (a service on port 80) was then routed by the wrong path. Bun.serve
    // here is plain http, so the search may start right after "http://".
    new Elysia({ handler: { standardHostname: false } })
      .onError(({ code, error, request }) => toErrorResponse(code, error, request, routes))
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
      .use(createRoutesOnly(s));
  routes = routeTableOf(app);
  return app;
}

/** The routes alone (no CORS, no docs). */
function createRoutesOnly(s: AppServices) {
  return new Elysia({ handler: { standardHostname: false } })
    .use(opsRoutes(s))
    .use(lookupRoutes(s))
    .use(assessmentRoutes(s))
    .use(asnRoutes(s))
    .use(crawlerVerifyRoutes({ lookup: (ip) => lookupAddress(s.index.current, s.overrides.tableFor(s.index.current), ip), verifier: s.crawlers }))
    .use(authRoutes({ config: s.config, accounts: s.accounts, now: s.now }))
    .use(dashboardRoutes({ config: s.config, accounts: s.accounts, now: s.now }))
    // The legacy /{ip} catch-all goes last so every static route wins.
    .use(legacyRoutes(s));
}

export type App = ReturnType<typeof createApp>;
