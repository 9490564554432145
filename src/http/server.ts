/**
 * The request path: every request is read once (its path, request-target.ts;
 * its route, from the route table of routes/table.ts) and dispatched once:
 * who is calling (IP, API key -> tier), the rate limit, usage counting, then
 * the route's handler; the X-RateLimit-* headers per spec 8, Cache-Control,
 * CORS and metrics are added on the way out, here for every answer alike.
 * A request without one consistent path is 400 BAD_REQUEST; a path of no
 * route is 404, a method its route does not answer 405 with `Allow`. Errors
 * are rendered by the one renderer (error-response.ts).
 */
import type { Server } from 'bun';
import type { App } from './app.ts';
import type { Caller } from './caller.ts';
import { clientIp } from './client-ip.ts';
import { requestWantsText } from './negotiation.ts';
import { ApiError } from '../api-error.ts';
import { errorResponse, failureResponse, NOT_FOUND } from './error-response.ts';
import { adminBudgetExceeded, applyRateLimitHeaders, bucketKeyFor, limiterKeyFor, rateLimitedError, upgradeUrlFor } from './ratelimit/index.ts';
import { isAdmin } from './admin.ts';
import type { RateDecision } from './ratelimit/index.ts';
import { addCorsHeaders, preflightResponse } from './cors.ts';
import type { ResolvedKey } from '../accounts/key-cache.ts';
import { methodLabel } from './http-metrics.ts';
import { pathEnd, RequestTargets } from './request-target.ts';
import { handlerFor, OTHER_ROUTE, type RouteEntry } from './route-table.ts';
import { takesNoToken } from './routes/table.ts';
import type { AppServices } from './services.ts';
import { YoungGcPacer } from './young-gc-pacer.ts';
import { ConnectionGate } from './connection-gate.ts';
import { connectionCapFor } from '../config.ts';
import { currentDescriptorLimit, openDescriptorCount } from '../net/descriptor-limit.ts';

/** Seconds a connection may stay idle before Bun closes it (Bun.serve idleTimeout, src/host/start-server.ts). */
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
function resolveCaller(services: AppServices, request: Request, server: Server<unknown> | null, exempt: boolean): ResolvedCaller | Promise<ResolvedCaller> {
  // Routes that take no token need no key: the header is not read there (no 401 answers whether a key exists).
  const key = exempt ? null : request.headers.get('x-api-key');
  if (key === null) return new RequestCaller(services, request, server, null, null);
  const trimmed = key.trim();
  const resolved = trimmed === '' ? null : services.accounts.resolveApiKeyNow(trimmed);
  if (resolved instanceof Promise) return resolved.then((r) => new RequestCaller(services, request, server, r, INVALID_API_KEY));
  return new RequestCaller(services, request, server, resolved, INVALID_API_KEY);
}

/**
 * The caller of a resolved key (null: anonymous, refused with `refusal` when
 * a key was sent), whose IP is read on first use: only caller-IP routes and the rate
 * limiter read it, so an explicit lookup with limits off never pays for the
 * socket address and the forwarding headers.
 */
class RequestCaller implements ResolvedCaller {
  private address: string | null | undefined = undefined;
  readonly tier: Caller['tier'];
  readonly keyId: string | null;
  readonly userId: string | null;
  readonly refusal: ApiError | null;
  constructor(
    private readonly services: AppServices,
    private readonly request: Request,
    private readonly server: Server<unknown> | null,
    key: ResolvedKey | null,
    refusal: ApiError | null,
  ) {
    this.tier = key?.tier ?? 'anonymous';
    this.keyId = key?.keyId ?? null;
    this.userId = key?.userId ?? null;
    this.refusal = key === null ? refusal : null;
  }

  get ip(): string | null {
    if (this.address === undefined) this.address = clientIp(this.server?.requestIP(this.request)?.address ?? null, this.request.headers, this.services.trusted);
    return this.address;
  }
}

/**
 * Spends the caller's admin budget when the request presents an
 * Authorization header that is not the admin token (to a route that reads it)
 * (ratelimit/admin-budget.ts); the 429 to answer past the budget, else null
 * (the route then answers its own 403 or public view). Logged without the token.
 */
function refusedAdminToken(services: AppServices, request: Request, route: string, caller: Caller): ApiError | null {
  if (!request.headers.has('authorization') || isAdmin(request, services.config.adminToken)) return null;
  const bucket = bucketKeyFor(caller);
  // Spent by address, IPv6 /48 and /32, and host-wide (ratelimit/admin-budget.ts), whatever API key came along.
  const decision = services.adminFailures.spend(caller.ip);
  const scope = decision.scope === bucket ? '' : ` (budget of ${decision.scope})`;
  if (decision.remaining === 0 || !decision.allowed) {
    // One line when a budget runs out, none per refused request past it: the log stays bounded.
    if (decision.allowed) console.warn(`[admin] wrong admin token on ${route} from ${bucket}: budget of ${decision.limit} a minute spent${scope}, further tries answer 429`);
  } else console.warn(`[admin] wrong admin token on ${route} from ${bucket} (${decision.remaining} tries left this minute${scope})`);
  return decision.allowed ? null : adminBudgetExceeded(decision);
}

/** The connection gate of a server: IPINTEL_MAX_CONNECTIONS, else derived from the descriptor limit (connection-gate.ts). */
export function connectionGateFor(services: AppServices): ConnectionGate {
  const max = services.config.maxConnections ?? connectionCapFor(currentDescriptorLimit().soft);
  return new ConnectionGate({ max, quietMs: (IDLE_TIMEOUT_SECONDS + 5) * 1000, openDescriptors: openDescriptorCount, shared: services.host?.connections, workers: services.host ? services.config.workers : 1 });
}

/** The error on a connection past the cap: 503, and the connection closed after it. */
function connectionRefusal(max: number): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'Too many open connections; retry shortly', { what: 'connections', limit: max }, { 'retry-after': '1', connection: 'close' });
}

const BAD_REQUEST = new ApiError('BAD_REQUEST', 'The request target or Host header cannot be parsed', {});
const PUBLISHER_ONLY = new ApiError('NOT_FOUND', 'This process is a publisher: it serves /health, /metrics and /v1/data/status only', {});

/** 404 for a path of no route, 405 with `Allow` for a method its route does not answer. */
function unrouted(entry: RouteEntry | null, method: string): ApiError {
  if (entry === null) return NOT_FOUND;
  return new ApiError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${entry.label}`, { allowed_methods: entry.allow.split(', ') }, { allow: entry.allow });
}

/**
 * The fetch handler for Bun.serve: every request is answered here once,
 * refused before routing (past the connection cap, a target that cannot be
 * parsed, a route a publisher does not serve) or through `dispatch`.
 * `pacer` sees every request (young-gc-pacer.ts).
 */
export function createFetchHandler(services: AppServices, app: App, pacer: { tick(): void } = new YoungGcPacer(), gate: ConnectionGate = connectionGateFor(services)) {
  const targets = new RequestTargets();
  const table = app.table;
  // Made once: refusals come in floods.
  const tooManyConnections = connectionRefusal(gate.max);
  const publisherOnly = services.config.role === 'publisher';
  const upgradeUrl = upgradeUrlFor(services.config.upgradeUrl);
  // A recorder per route for its GET 200s, found once (metrics.ts observer).
  const observers = table.entries.map((e) => services.metrics.observer(e.label, 'GET', 200));

  /** Counts a finished request under its route label. */
  function observe(entry: RouteEntry | null, method: string, status: number, t0: number): void {
    const seconds = (performance.now() - t0) / 1000;
    if (entry !== null && status === 200 && method === 'GET') observers[entry.id](seconds);
    else services.metrics.observe(entry === null ? OTHER_ROUTE : entry.label, method, status, seconds);
  }

  /**
   * What every answer gets, here alone: the X-RateLimit-* headers of an
   * admitted request, the CORS headers (cors.ts) and a Cache-Control (spec
   * 4.9 wants one on every answer; routes set their own, anything else must
   * not be cached by accident).
   */
  function seal(response: Response, decision: RateDecision | null): Response {
    const headers = response.headers;
    if (decision !== null && decision.allowed) applyRateLimitHeaders(headers, decision, response.status);
    // An answer with the CORS headers was built from a prebuilt header set, which has its Cache-Control.
    if (!headers.has('access-control-allow-origin')) {
      addCorsHeaders(headers);
      if (!headers.has('cache-control')) headers.set('cache-control', 'no-store');
    }
    return response;
  }

  /** Anything thrown while answering, as the answer: text on a legacy route that asked for text. */
  function failure(e: unknown, request: Request, entry: RouteEntry | null): Response {
    const text = entry !== null && entry.textErrors && requestWantsText(request);
    return failureResponse(e, text, `${methodLabel(request.method)} ${entry === null ? OTHER_ROUTE : entry.label}`);
  }

  /**
   * The route's answer once the caller is known and any token taken: a
   * refusal (rate limit, admin budget, bad key), the preflight, 404/405, or
   * the route's handler. Synchronous when the handler is.
   */
  function routed(request: Request, method: string, entry: RouteEntry | null, path: string, hasQuery: boolean, caller: ResolvedCaller, adminRefusal: ApiError | null, decision: RateDecision | null): Response | Promise<Response> {
    let response: Response | Promise<Response>;
    try {
      const handler = entry === null ? undefined : handlerFor(entry, method);
      if (decision !== null && !decision.allowed) response = failure(rateLimitedError(decision, upgradeUrl), request, entry);
      else if (adminRefusal !== null) response = failure(adminRefusal, request, entry);
      else if (caller.refusal !== null) response = failure(caller.refusal, request, entry);
      else if (method === 'OPTIONS') response = preflightResponse(request);
      else if (handler === undefined) response = failure(unrouted(entry, method), request, entry);
      else {
        response = handler(request, path, hasQuery, caller, decision);
        // A route whose answers carry their own header sets needs nothing here unless a limit was taken and it does not add its headers itself.
        if (entry!.prebuiltHeaders && (decision === null || entry!.ratesItself)) return response instanceof Promise ? response.catch((e: unknown) => seal(failure(e, request, entry), decision)) : response;
      }
    } catch (e) {
      response = failure(e, request, entry);
    }
    if (response instanceof Promise) {
      return response.then(
        (r) => seal(r, decision),
        (e: unknown) => seal(failure(e, request, entry), decision),
      );
    }
    return seal(response, decision);
  }

  /** Takes the caller's token (unless exempt), counts keyed usage, then answers. */
  function admitted(request: Request, method: string, entry: RouteEntry | null, path: string, hasQuery: boolean, exempt: boolean, caller: ResolvedCaller): Response | Promise<Response> {
    const adminRefusal = entry !== null && entry.readsAdminToken ? refusedAdminToken(services, request, entry.label, caller) : null;
    if (exempt) return routed(request, method, entry, path, hasQuery, caller, adminRefusal, null);
    const limiter = services.limiter;
    if (limiter === null) {
      // Usage is counted with or without a limiter (IPINTEL_RATE_LIMITS=off).
      if (caller.keyId) services.accounts.recordUsage(caller.keyId);
      return routed(request, method, entry, path, hasQuery, caller, adminRefusal, null);
    }
    const counted = (decision: RateDecision) => {
      if (caller.keyId) services.accounts.recordUsage(caller.keyId);
      return routed(request, method, entry, path, hasQuery, caller, adminRefusal, decision);
    };
    let decision: RateDecision | Promise<RateDecision>;
    try {
      decision = limiter.consume(limiterKeyFor(caller), caller.tier);
    } catch (e) {
      return seal(failure(e, request, entry), null);
    }
    if (decision instanceof Promise) return decision.then(counted, (e: unknown) => seal(failure(e, request, entry), null));
    return counted(decision);
  }

  /**
   * The one dispatch: caller, rate limit, usage, then the route. With no
   * API key and no limiter (or an exempt route) nothing is awaited before
   * the handler, so a memoised lookup is answered synchronously.
   */
  function dispatch(request: Request, method: string, server: Server<unknown> | null, entry: RouteEntry | null, path: string, hasQuery: boolean): Response | Promise<Response> {
    const exempt = takesNoToken(method, entry, path);
    let caller: ResolvedCaller | Promise<ResolvedCaller>;
    try {
      caller = resolveCaller(services, request, server, exempt);
    } catch (e) {
      return seal(failure(e, request, entry), null);
    }
    if (caller instanceof Promise) {
      return caller.then(
        (c) => admitted(request, method, entry, path, hasQuery, exempt, c),
        (e: unknown) => seal(failure(e, request, entry), null),
      );
    }
    return admitted(request, method, entry, path, hasQuery, exempt, caller);
  }

  return function handle(request: Request, server: Server<unknown> | null): Response | Promise<Response> {
    pacer.tick();
    const t0 = performance.now();
    const method = request.method;
    let response: Response | Promise<Response>;
    let entry: RouteEntry | null = null;
    if (server !== null && !gate.allows(request, server)) {
      response = seal(errorResponse(tooManyConnections), null);
    } else {
      const url = request.url;
      const start = targets.pathStart(url);
      if (start < 0) {
        response = seal(errorResponse(BAD_REQUEST), null);
      } else {
        const end = pathEnd(url, start);
        entry = table.matchIn(url, start, end);
        if (publisherOnly && (entry === null || !entry.publisher)) response = seal(failure(PUBLISHER_ONLY, request, entry), null);
        else response = dispatch(request, method, server, entry, url.slice(start, end), end < url.length);
      }
    }
    if (response instanceof Promise) {
      const routedEntry = entry;
      return response.then((r) => {
        observe(routedEntry, method, r.status, t0);
        return r;
      });
    }
    observe(entry, method, response.status, t0);
    return response;
  };
}
