/**
 * A small app like the integrator's: a first hook resolving X-API-Key to a
 * Caller (401 INVALID_API_KEY when unknown/revoked), the auth and dashboard
 * plugins, an echo route standing in for lookups, and an error hook that
 * renders ApiError (and Elysia's own errors) in the spec's shape.
 */
import { Elysia } from 'elysia';
import { loadConfig, type Config } from '../../../src/config.ts';
import { openAccounts, type AccountStore, type AccountsOptions } from '../../../src/accounts/store.ts';
import { authRoutes } from '../../../src/http/routes/auth.ts';
import { dashboardRoutes } from '../../../src/http/routes/dashboard.ts';
import { ApiError } from '../../../src/api-error.ts';
import { errorResponse } from '../../../src/http/error-response.ts';
import { callerOf, setCaller } from '../../../src/http/caller.ts';

export interface TestApp {
  url: string;
  config: Config;
  accounts: AccountStore;
  stop(): Promise<void>;
}

/** Starts the app on 127.0.0.1; `env` is the server environment (the redirect URI is filled in); `dbPath` may be a postgres:// URL. */
export async function startTestApp(env: Record<string, string>, opts: { dbPath?: string; accounts?: AccountsOptions; now?: () => number } = {}): Promise<TestApp> {
  let handle: (r: Request) => Response | Promise<Response> = () => new Response('starting', { status: 503 });
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (r) => handle(r) });
  const url = `http://127.0.0.1:${server.port}`;
  const config = loadConfig({ IPINTEL_OAUTH_REDIRECT_URI: `${url}/auth/callback`, ...env });
  const accounts = await openAccounts(opts.dbPath ?? ':memory:', { flushIntervalMs: 0, syncIntervalMs: 0, ...opts.accounts });
  const app = new Elysia()
    .onRequest(({ request }) => {
      const raw = request.headers.get('x-api-key');
      if (raw === null) return;
      const key = accounts.resolveApiKey(raw);
      if (!key) return errorResponse(new ApiError('INVALID_API_KEY', 'API key invalid or revoked'));
      setCaller(request, { ip: '127.0.0.1', tier: key.tier, keyId: key.keyId, userId: key.userId });
      accounts.recordUsage(key.keyId);
    })
    .onError(({ error, code }) => {
      if (error instanceof ApiError) return errorResponse(error);
      if (code === 'NOT_FOUND') return errorResponse(new ApiError('NOT_FOUND', 'Endpoint does not exist'));
      if (code === 'VALIDATION' || code === 'PARSE') return errorResponse(new ApiError('INVALID_REQUEST', 'Malformed request'));
      return errorResponse(new ApiError('INTERNAL_ERROR', 'Unexpected server error'));
    })
    .get('/v1/echo', ({ request }) => callerOf(request))
    .use(authRoutes({ config, accounts, now: opts.now }))
    .use(dashboardRoutes({ config, accounts, now: opts.now }));
  handle = (r) => app.handle(r);
  return {
    url,
    config,
    accounts,
    stop: async () => {
      await server.stop(true);
      await accounts.close();
    },
  };
}

/** The usual OIDC environment pointing at a mock provider. */
export function oidcEnv(idpUrl: string, clientId: string, clientSecret: string): Record<string, string> {
  return {
    IPINTEL_OAUTH_PROVIDER: 'oidc',
    IPINTEL_OAUTH_CLIENT_ID: clientId,
    IPINTEL_OAUTH_CLIENT_SECRET: clientSecret,
    IPINTEL_OAUTH_AUTHORIZE_URL: `${idpUrl}/authorize`,
    IPINTEL_OAUTH_TOKEN_URL: `${idpUrl}/token`,
    IPINTEL_OAUTH_USERINFO_URL: `${idpUrl}/userinfo`,
  };
}
