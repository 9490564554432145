/**
 * The Elysia application: every route of the spec, CORS, OpenAPI at
 * /openapi.json with a docs page at /docs, and one error hook that renders
 * every failure in the spec's error shape.
 */
import { cors } from '@elysiajs/cors';
import { swagger } from '@elysiajs/swagger';
import { Elysia } from 'elysia';
import { crawlerVerifyRoutes } from './routes/crawler-verify.ts';
import { authRoutes } from './routes/auth.ts';
import { dashboardRoutes } from './routes/dashboard.ts';
import { ApiError, errorResponse } from './errors.ts';
import type { AppServices } from './services.ts';
import { ERROR_SCHEMA, HAND_DOCUMENTED_PATHS } from './openapi-paths.ts';
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
  return (
    // Elysia's default finds the path by searching for "/" from the 11th
    // character of the URL, assuming a host of 4+ characters; `Host: api`
    // (a service on port 80) was then routed by the wrong path. Bun.serve
    // here is plain http, so the search may start right after "http://".
    new Elysia({ handler: { standardHostname: false } })
      .onError(({ code, error, request }) => toErrorResponse(code, error, request))
      .use(
        cors({
          origin: '*',
          credentials: false,
          methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
          allowedHeaders: ['Content-Type', 'X-API-Key', 'Authorization', 'If-None-Match'],
          exposeHeaders: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-RateLimit-Tier', 'Retry-After', 'ETag'],
          maxAge: 86400,
        }),
      )
      // The CORS plugin marks every answer `Vary: *` for origin '*', which no shared
      // cache can ever match: it would void the public caching of spec 4.9. Answers do
      // not vary by Origin here (always '*'); routes that vary by Accept say so themselves.
      .onRequest(({ set }) => {
        if (set.headers.vary === '*') delete set.headers.vary;
      })
      .use(
        swagger({
          path: '/docs',
          specPath: '/openapi.json',
          exclude: ['/docs', '/openapi.json'],
          documentation: {
            info: {
              title: 'ipintel',
              version: '1',
              description:
                'IP intelligence: location, network ownership and routing, classification, evidence, score and an advisory decision. Errors are JSON {error, code, details}.',
            },
            tags: [
              { name: 'lookup', description: 'IP lookups (v1)' },
              { name: 'crawlers', description: 'Crawler verification' },
              { name: 'asn', description: 'ASN details' },
              { name: 'legacy', description: 'Legacy routes (JSON or plain text)' },
              { name: 'operations', description: 'Health, status, metrics, reload' },
              { name: 'accounts', description: 'Sign-in, keys, tiers, usage' },
            ],
            components: {
              securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' }, admin: { type: 'http', scheme: 'bearer' } },
              schemas: { Error: ERROR_SCHEMA as never },
            },
            // Routes that read their request by hand are described explicitly.
            paths: HAND_DOCUMENTED_PATHS as never,
          },
        }),
      )
      .use(opsRoutes(s))
      .use(lookupRoutes(s))
      .use(assessmentRoutes(s))
      .use(asnRoutes(s))
      .use(crawlerVerifyRoutes({ lookup: (ip) => s.index.current.lookup(ip), verifier: s.crawlers }))
      .use(authRoutes({ config: s.config, accounts: s.accounts, now: s.now }))
      .use(dashboardRoutes({ config: s.config, accounts: s.accounts, now: s.now }))
      // The legacy /{ip} catch-all goes last so every static route wins.
      .use(legacyRoutes(s))
  );
}

export type App = ReturnType<typeof createApp>;
