/**
 * The application over a set of services: the route table (routes/table.ts)
 * with each handler made once, and the Elysia app mounted under it for
 * the routes the table marks MOUNTED (sign-in, the dashboard: cookies,
 * redirects, HTML). The request path (server.ts) routes every request
 * through the table; only a MOUNTED route reaches Elysia.
 */
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
 * The Elysia app of the sign-in and dashboard routes (mounted-app.ts). Where
 * sign-in is configured it is built with the app, before any request; where
 * it is off (the dashboard then only says so) it is built on the first
 * request to the dashboard: no lookup route needs Elysia, and every worker
 * building it before it listens cost each start's CPU. (From the worker
 * bundle this `require` reads no file; from the source it does, once.)
 */
function mountedApp(services: AppServices): App['mounted'] {
  return (require('./mounted-app.ts') as typeof import('./mounted-app.ts')).mountedApp(services);
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
