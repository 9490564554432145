/**
 * The request path around the Elysia app: who is calling (IP, API key ->
 * tier), the rate limit, usage counting, the X-RateLimit-* headers per spec
 * 8, and metrics. Kept outside Elysia so it runs once per request, first
 * and last, for every route alike.
 *
 * The request is read once: its path (request-target.ts) and route
 * (route-table.ts, from the app's own routes) are what the limiter, the
 * router, metrics and logs all see. A request without one consistent path
 * is 400 BAD_REQUEST; a path of no route is 404, a method its route does
 * not answer 405 with `Allow`, both before the app runs.
 */
import type { Server } from 'bun';
import type { App } from './app.ts';
import { setCaller, type Caller } from './caller.ts';
import { clientIp } from './client-ip.ts';
import { requestWantsText, textErrorResponse } from './negotiation.ts';
import { ApiError } from '../errors.ts';
import { errorResponse } from './errors.ts';
import { ADMIN_TOKEN_ROUTES, adminBudgetExceeded, applyRateLimitHeaders, bucketKeyFor, isExemptFromRateLimit, rateLimitedError, upgradeUrlFor } from './ratelimit/index.ts';
import { isAdmin } from './admin.ts';
import type { RateDecision } from './ratelimit/index.ts';
import { CORS_RESPONSE_HEADERS } from './cors.ts';
import type { ResolvedKey } from '../accounts/key-cache.ts';
import { methodLabel } from './metrics.ts';
import { pathEnd, RequestTargets } from './request-target.ts';
import { allowsMethod, OTHER_ROUTE, routeTableOf, type RouteEntry } from './route-table.ts';
import type { AppServices } from './services.ts';
import { lastSegmentParam } from './request-params.ts';
import { LEGACY_LOOKUP_ROUTE, legacyLookupResponse } from './routes/legacy.ts';
import { V1_LOOKUP_ROUTE, v1PipelineOf } from './v1-pipeline.ts';
import { YoungGcPacer } from './young-gc-pacer.ts';
import { ConnectionGate } from './connection-gate.ts';
import { connectionCapFor } from '../config.ts';
import { currentDescriptorLimit, openDescriptorCount } from '../net/descriptor-limit.ts';

/** Seconds a connection may stay idle before Bun closes it (Bun.serve idleTimeout, src/server.ts). */
export const IDLE_TIMEOUT_SECONDS = 30;

/** A resolved caller; `refusal` is the 401 to answer when an API key was sent and refused (the caller then counts as anonymous). */
type ResolvedCaller = Caller & { refusal: ApiError | null };

/** The one refusal of a bad key (never names the key: it may be a secret pasted in the wrong place). */
const INVALID_API_KEY = new ApiError('INVALID_API_KEY', 'The API key is invalid or revoked', {});

/**
 * Resolves the caller of a request: synchronous unless the key missed the
 * cache and the database is asked (a key created a moment ago elsewhere).
 * A refused key leaves an anonymous caller, so it is limited by its IP's
 * anonymous bucket before it is told 401: guessing keys is not free.
 */
function resolveCaller(s: AppServices, request: Request, server: Server<unknown> | null, exempt: boolean): ResolvedCaller | Promise<ResolvedCaller> {
  // Routes that take no token need no key: the header is not read there (no 401 answers whether a key exists).
  const key = exempt ? null : request.headers.get('x-api-key');
  if (key === null) return callerWith(s, request, server, null, null);
  const trimmed = key.trim();
  const resolved = trimmed === '' ? null : s.accounts.resolveApiKeyNow(trimmed);
  if (resolved instanceof Promise) return resolved.then((r) => callerWith(s, request, server, r, INVALID_API_KEY));
  return callerWith(s, request, server, resolved, INVALID_API_KEY);
}

/** The caller of a resolved key (null: anonymous, refused with `refusal` when a key was sent). */
function callerWith(s: AppServices, request: Request, server: Server<unknown> | null, key: ResolvedKey | null, refusal: ApiError | null): ResolvedCaller {
  // Only caller-IP routes and the rate limiter read the IP: an explicit lookup with
  // limits off never pays for the socket address and the forwarding headers.
  let ip: string | null | undefined;
  return {
    get ip() {
      if (ip === undefined) ip = clientIp(server?.requestIP(request)?.address ?? null, request.headers, s.trusted);
      return ip;
    },
    tier: key?.tier ?? 'anonymous',
    keyId: key?.keyId ?? null,
    userId: key?.userId ?? null,
    refusal: key === null ? refusal : null,
  };
}

/**
 * Spends the caller's admin budget when the request presents an
 * Authorization header that is not the admin token to a route that reads it
 * (ratelimit/admin-budget.ts); the 429 to answer past the budget, else null
 * (the route then answers its own 403 or public view). Logged without the token.
 */
function refusedAdminToken(s: AppServices, request: Request, route: string, caller: Caller): ApiError | null {
  if (!ADMIN_TOKEN_ROUTES.has(route) || !request.headers.has('authorization') || isAdmin(request, s.config.adminToken)) return null;
  const bucket = bucketKeyFor(caller);
  const decision = s.adminFailures.spend(bucket);
  if (decision.remaining === 0 || !decision.allowed) {
    // One line when the budget runs out, none per refused request past it: the log stays bounded.
    if (decision.allowed) console.warn(`[admin] wrong admin token on ${route} from ${bucket}: budget of ${decision.limit} a minute spent, further tries answer 429`);
  } else console.warn(`[admin] wrong admin token on ${route} from ${bucket} (${decision.remaining} tries left this minute)`);
  return decision.allowed ? null : adminBudgetExceeded(decision);
}
/** The routes a publisher (IPINTEL_ROLE=publisher) answers; every other path is 404. */
const PUBLISHER_ROUTES = new Set(['/health', '/metrics', '/v1/data/status']);

/** Legacy routes answer their errors as text when the request asked for text (spec 4.6 rule 6). */
const LEGACY_ROUTES = new Set(['/', LEGACY_LOOKUP_ROUTE]);

/**
 * An error raised here, before the route ran, in the representation the route
 * would have used, with the CORS headers the app puts on its own answers: a
 * browser must be able to read a 401 or 429 and its Retry-After and limit headers.
 */
function earlyError(err: ApiError, request: Request, route: string): Response {
  const response = LEGACY_ROUTES.has(route) && requestWantsText(request) ? textErrorResponse(err) : errorResponse(err);
  for (const name in CORS_RESPONSE_HEADERS) response.headers.set(name, CORS_RESPONSE_HEADERS[name]);
  return response;
}

/** 404 for a path no route answers, 405 for a method its route does not (before the app runs); null otherwise. */
function unroutedResponse(entry: RouteEntry | null, request: Request, route: string): Response | null {
  const method = request.method;
  // CORS preflights are the CORS plugin's to answer, on any path.
  if (method === 'OPTIONS' || (entry !== null && allowsMethod(entry, method))) return null;
  const err =
    entry === null
      ? new ApiError('NOT_FOUND', 'No such endpoint or resource', {})
      : new ApiError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${entry.label}`, { allowed_methods: entry.allow.split(', ') }, { allow: entry.allow });
  return earlyError(err, request, route);
}

/** The answer to a failure: a route's error as the spec's error, anything else 500 INTERNAL_ERROR (the cause only in the log). */
function failureResponse(e: unknown, request: Request, route: string): Response {
  if (e instanceof ApiError) return earlyError(e, request, route);
  // The route label, not the path: a client's text never reaches the log.
  console.error(`request failed (${methodLabel(request.method)} ${route}): ${(e as Error).message}`);
  return earlyError(new ApiError('INTERNAL_ERROR', 'Unexpected server error', {}), request, route);
}

/** The connection gate of a server: IPINTEL_MAX_CONNECTIONS, else derived from the descriptor limit (connection-gate.ts). */
export function connectionGateFor(s: AppServices): ConnectionGate {
  const max = s.config.maxConnections ?? connectionCapFor(currentDescriptorLimit().soft);
  return new ConnectionGate({ max, quietMs: (IDLE_TIMEOUT_SECONDS + 5) * 1000, openDescriptors: openDescriptorCount, shared: s.host?.connections, workers: s.host ? s.config.workers : 1 });
}

/** The answer on a connection past the cap: 503, and the connection closed after it. */
function connectionRefusal(request: Request, max: number): Response {
  const err = new ApiError('SERVICE_UNAVAILABLE', 'Too many open connections; retry shortly', { what: 'connections', limit: max }, { 'retry-after': '1' });
  const response = earlyError(err, request, OTHER_ROUTE);
  response.headers.set('connection', 'close');
  return response;
}

/** The fetch handler for Bun.serve; `pacer` sees every request (young-gc-pacer.ts). */
export function createFetchHandler(s: AppServices, app: App, pacer: { tick(): void } = new YoungGcPacer(), gate: ConnectionGate = connectionGateFor(s)) {
  const lookup = v1PipelineOf(s);
  const targets = new RequestTargets();
  const routes = routeTableOf(app);
  // The route the lookup pipeline answers directly (a GET); compared by identity per request.
  const lookupRoute = routes.entry(V1_LOOKUP_ROUTE);
  // The legacy explicit lookup, answered the same way before the framework.
  const legacyLookupRoute = routes.entry(LEGACY_LOOKUP_ROUTE);
  const observeLookup = s.metrics.observer(V1_LOOKUP_ROUTE, 'GET', 200);
  const observeLegacy = s.metrics.observer(LEGACY_LOOKUP_ROUTE, 'GET', 200);
  const publisherOnly = s.config.role === 'publisher';

  /** Caller, rate limit, usage, then the route (the lookup pipeline for a GET lookup, else the app). */
  async function answer(request: Request, server: Server<unknown> | null, path: string, hasQuery: boolean, route: string, entry: RouteEntry | null): Promise<Response> {
    let response: Response;
    let decision: RateDecision | null = null;
    try {
      // Which requests take a token is the rate-limit module's policy, read into the route table; a path of no route by the path itself.
      const exempt = request.method === 'OPTIONS' || (entry !== null ? entry.exemptFromRateLimit : isExemptFromRateLimit(request.method, path));
      let caller = resolveCaller(s, request, server, exempt);
      if (caller instanceof Promise) caller = await caller;
      setCaller(request, caller);
      const adminRefusal = refusedAdminToken(s, request, route, caller);
      if (!exempt) {
        if (s.limiter) decision = await s.limiter.consume(bucketKeyFor(caller), caller.tier);
        // Usage is counted with or without a limiter (IPINTEL_RATE_LIMITS=off).
        if (caller.keyId) s.accounts.recordUsage(caller.keyId);
      }
      if (decision && !decision.allowed) response = earlyError(rateLimitedError(decision, upgradeUrlFor(s.config.upgradeUrl)), request, route);
      else if (adminRefusal) response = earlyError(adminRefusal, request, route);
      else if (caller.refusal) response = earlyError(caller.refusal, request, route);
      else if (entry === lookupRoute && entry !== null && request.method === 'GET') response = await lookup.answer(request, lastSegmentParam(path), hasQuery, caller.tier, false);
      else if (entry === legacyLookupRoute && entry !== null && request.method === 'GET') response = await legacyLookupResponse(s, request, lastSegmentParam(path), hasQuery);
      else response = unroutedResponse(entry, request, route) ?? (await app.handle(request));
    } catch (e) {
      response = failureResponse(e, request, route);
    }
    if (decision && decision.allowed) applyRateLimitHeaders(response.headers, decision, response.status);
    // Spec 4.9 wants a Cache-Control on every answer; routes set their own, and
    // anything else (docs, OpenAPI, preflight) must not be cached by accident.
    if (!response.headers.has('cache-control')) response.headers.set('cache-control', 'no-store');
    return response;
  }

  return function handle(request: Request, server: Server<unknown> | null): Response | Promise<Response> {
    pacer.tick();
    if (server !== null && !gate.allows(request, server)) {
      const refused = connectionRefusal(request, gate.max);
      s.metrics.observe(OTHER_ROUTE, request.method, refused.status, 0);
      return refused;
    }
    const t0 = performance.now();
    const url = request.url;
    const start = targets.pathStart(url);
    if (start < 0) {
      const response = earlyError(new ApiError('BAD_REQUEST', 'The request target or Host header cannot be parsed', {}), request, OTHER_ROUTE);
      s.metrics.observe(OTHER_ROUTE, request.method, response.status, (performance.now() - t0) / 1000);
      return response;
    }
    const end = pathEnd(url, start);
    const entry = routes.matchIn(url, start, end);
    const path = url.slice(start, end);
    const hasQuery = end < url.length;
    const route = entry === null ? OTHER_ROUTE : entry.label;
    if (publisherOnly && !PUBLISHER_ROUTES.has(route)) {
      const response = earlyError(new ApiError('NOT_FOUND', 'This process is a publisher: it serves /health, /metrics and /v1/data/status only', {}), request, route);
      s.metrics.observe(route, request.method, response.status, (performance.now() - t0) / 1000);
      return response;
    }
    // The fast case of the lookups (v1 and legacy /{ip}): without an API key and with limits off there is no caller
    // to resolve, no token to take and no usage to count, so nothing to await before the pipeline.
    if (entry !== null && (entry === lookupRoute || entry === legacyLookupRoute) && request.method === 'GET' && s.limiter === null && !request.headers.has('x-api-key')) {
      let response: Response | Promise<Response>;
      try {
        response =
          entry === lookupRoute
            ? lookup.answer(request, lastSegmentParam(path), hasQuery, 'anonymous', false)
            : legacyLookupResponse(s, request, lastSegmentParam(path), hasQuery);
      } catch (e) {
        response = failureResponse(e, request, route);
      }
      if (!(response instanceof Promise)) {
        if (response.status === 200) (entry === lookupRoute ? observeLookup : observeLegacy)((performance.now() - t0) / 1000);
        else s.metrics.observe(route, request.method, response.status, (performance.now() - t0) / 1000);
        return response;
      }
      return response
        .catch((e: unknown) => failureResponse(e, request, route))
        .then((r) => {
          s.metrics.observe(route, request.method, r.status, (performance.now() - t0) / 1000);
          return r;
        });
    }
    return answer(request, server, path, hasQuery, route, entry).then((response) => {
      s.metrics.observe(route, request.method, response.status, (performance.now() - t0) / 1000);
      return response;
    });
  };
}
