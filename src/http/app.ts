/**
 * The application over a set of services: the route table (routes/table.ts)
 * with each handler made once, and the Elysia app mounted under it for
 * the routes the table marks MOUNTED (sign-in, the dashboard: cookies,
 * redirects, HTML). The request path (server.ts) routes every request
 * through the table; only a MOUNTED route reaches Elysia.
 */
import { ApiError } from '../api-error.ts';
import { failureResponse, NOT_FOUND } from './error-response.ts';
import type { AppServices } from './services.ts';
import { oauthEnabled } from '../accounts/oauth/setup-check.ts';
import { setCaller } from './caller.ts';
import { RouteTable, type RouteDeclaration, type RouteHandler } from './route-table.ts';
import { MOUNTED, NOT_ADDRESSES, routeDeclarations, type DeclaredRoute } from './routes/table.ts';

/** The routed application: its table (handlers bound to the services) and the mounted app. */
export interface App {
  readonly table: RouteTable;
  /** The Elysia app of the MOUNTED routes. */
  readonly mounted: { handle(request: Request): Promise<Response> };
}

/**
 * Elysia's own failures (a body it could not parse, a cookie whose signature
 * fails, a parameter that does not decode) as the spec's errors.
 */
function frameworkError(code: string | number, error: unknown): unknown {
  if (error instanceof ApiError) return error;
  if (code === 'NOT_FOUND') return NOT_FOUND;
  if (code === 'PARSE') return new ApiError('INVALID_REQUEST', 'The request body could not be parsed', {});
  if (code === 'VALIDATION') return new ApiError('INVALID_REQUEST', 'The request does not match what the route takes', {});
  if (code === 'INVALID_COOKIE_SIGNATURE') return new ApiError('UNAUTHORIZED', 'Invalid session cookie', {});
  return error;
}

/**
 * The sign-in routes' module, loaded (synchronously, while the app is built,
 * before any request) only where sign-in is configured: with it come Arctic
 * and its crypto, which a server with sign-in off has no route for.
 */
function signInRoutes(): typeof import('./routes/auth.ts') {
  return require('./routes/auth.ts');
}

/**
 * The Elysia app of the sign-in and dashboard routes; its failures rendered by the one error renderer.
 * Where sign-in is configured it is built with the app, before any request; where it is off (the
 * dashboard then only says so) it is built on the first request to the dashboard: no lookup route needs
 * Elysia, and every worker building it before it listens cost each start's CPU. (From the worker bundle
 * this `require` reads no file; from the source it does, once.)
 */
function mountedApp(services: AppServices): App['mounted'] {
  const { Elysia } = require('elysia') as typeof import('elysia');
  const { dashboardRoutes } = require('./routes/dashboard.ts') as typeof import('./routes/dashboard.ts');
  const deps = { config: services.config, accounts: services.accounts, now: services.now };
  return (
    // Elysia's default finds the path by searching for "/" from the 11th
    // character of the URL, assuming a host of 4+ characters; `Host: api`
    // (a service on port 80) was then routed by the wrong path. Bun.serve
    // here is plain http, so the search may start right after "http://".
    new Elysia({ handler: { standardHostname: false } })
      .onError(({ code, error }) => failureResponse(frameworkError(code, error), false, 'a sign-in or dashboard route'))
      .use(oauthEnabled(services.config.oauth) ? signInRoutes().authRoutes(deps) : new Elysia())
      .use(dashboardRoutes(deps))
  );
}

/** Builds the application over its services. */
export function createApp(services: AppServices): App {
  let mounted: App['mounted'] | null = oauthEnabled(services.config.oauth) ? mountedApp(services) : null;
  const mountedOnce = () => (mounted ??= mountedApp(services));
  // The mounted routes read the caller (tier, IP) from the request, as resolved by the request path.
  const mountedHandler: RouteHandler = (request, _path, _hasQuery, caller) => {
    setCaller(request, caller);
    return mountedOnce().handle(request);
  };
  const bind = (route: DeclaredRoute): RouteDeclaration<RouteHandler> => ({
    ...route,
    handlers: Object.fromEntries(Object.entries(route.handlers).map(([method, make]) => [method, make === MOUNTED ? mountedHandler : make(services)])),
  });
  const declarations = routeDeclarations(oauthEnabled(services.config.oauth));
  return {
    table: new RouteTable(declarations.map(bind), NOT_ADDRESSES),
    get mounted() {
      return mountedOnce();
    },
  };
}
