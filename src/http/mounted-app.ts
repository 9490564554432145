/**
 * The Elysia app of the routes the route table marks MOUNTED (sign-in, the
 * dashboard: cookies, redirects, HTML); its failures rendered by the one
 * error renderer. Its own module so that app.ts can load it, and Elysia with
 * it, only when it is built (app.ts says when).
 */
import { Elysia } from 'elysia';
import { ApiError } from '../api-error.ts';
import { oauthEnabled } from '../accounts/oauth/setup-check.ts';
import { failureResponse, NOT_FOUND } from './error-response.ts';
import { dashboardRoutes } from './routes/dashboard.ts';
import type { AppServices } from './services.ts';

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
 * The sign-in routes' module, loaded (synchronously, while the app is built)
 * only where sign-in is configured: with it come Arctic and its crypto,
 * which a server with sign-in off has no route for.
 */
function signInRoutes(): typeof import('./routes/auth.ts') {
  return require('./routes/auth.ts');
}

/** The Elysia app of the sign-in and dashboard routes over the services. */
export function mountedApp(services: AppServices): { handle(request: Request): Promise<Response> } {
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
