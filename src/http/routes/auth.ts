/**
 * /auth/* routes: OAuth sign-in (Arctic, state + PKCE), session, API keys,
 * tiers and usage. Errors are thrown as ApiError for the app's error hook,
 * except on the browser-facing callback, which may answer an HTML page.
 */
import { Elysia } from 'elysia';
import { generateCodeVerifier, generateState } from 'arctic';
import type { Config } from '../../config.ts';
import { KeyCapReached, type AccountStore } from '../../accounts/store.ts';
import { oauthSetup, ProviderError, type OAuthProvider } from '../../accounts/oauth/providers.ts';
import { OAUTH_COOKIE, SESSION_COOKIE, isSecureContext, readCookie, serializeCookie } from '../../accounts/web/cookies.ts';
import { clearSessionCookie, sessionCookie, sessionOfRequest, type RequestSession } from '../../accounts/web/session-context.ts';
import { isSameOriginRequest } from '../../accounts/web/origin.ts';
import { secretsEqual } from '../../accounts/secrets.ts';
import { keyView, tiersView, userView } from '../../accounts/views.ts';
import { parseCreateKeyBody, MAX_ACTIVE_KEYS, MAX_BODY_BYTES } from '../../accounts/web/create-key-body.ts';
import { tierRank } from '../../accounts/validation.ts';
import { ApiError } from '../../api-error.ts';
import { errorResponse, JSON_TYPE } from '../error-response.ts';
import { callerOf } from '../caller.ts';
import { TIERS } from '../../tiers.ts';
import { messagePage } from '../dashboard/html.ts';

export interface AuthRouteDeps {
  config: Config;
  accounts: AccountStore;
  now?: () => number;
}

/** How long a started sign-in may take before its state cookie expires. */
const OAUTH_COOKIE_MAX_AGE_S = 600;

/** A JSON response that is never cached, carrying any Set-Cookie values. */
function json(body: unknown, status = 200, setCookies: string[] = []): Response {
  const headers = new Headers({ 'content-type': JSON_TYPE, 'cache-control': 'no-store' });
  for (const c of setCookies) headers.append('set-cookie', c);
  return new Response(JSON.stringify(body), { status, headers });
}

/** The /auth/* routes of a configured identity provider (while none is configured, routes/table.ts answers 503 AUTH_DISABLED). */
export function authRoutes(deps: AuthRouteDeps): Elysia {
  const setup = oauthSetup(deps.config.oauth);
  if (!setup.enabled) throw new Error(`sign-in is not configured: ${setup.reason}`);
  return enabledRoutes(deps, setup.provider);
}

function enabledRoutes(deps: AuthRouteDeps, provider: OAuthProvider): Elysia {
  const { accounts, config } = deps;
  const now = deps.now ?? Date.now;
  const redirectUri = config.oauth.redirectUri;
  const secure = (request: Request) => isSecureContext(request.url, redirectUri);

  /** The request's session, or 401 UNAUTHORIZED. */
  const requireSession = async (request: Request): Promise<RequestSession> => {
    const s = await sessionOfRequest(request, accounts, redirectUri, now());
    if (!s) throw new ApiError('UNAUTHORIZED', 'Sign in first: this route needs a session');
    return s;
  };

  /** Refuses cookie-authenticated writes coming from another site. */
  const requireSameOrigin = (request: Request): void => {
    if (!isSameOriginRequest(request.headers, request.url, redirectUri)) {
      throw new ApiError('FORBIDDEN', 'Cross-site request refused');
    }
  };

  /** Runs a session route; a rotated session cookie rides on errors too, so rotation never signs the user out. */
  const withSession = async (request: Request, fn: (s: RequestSession) => Response | Promise<Response>): Promise<Response> => {
    const s = await requireSession(request);
    try {
      const res = await fn(s);
      for (const c of s.setCookies) res.headers.append('set-cookie', c);
      return res;
    } catch (err) {
      if (err instanceof ApiError && s.setCookies.length > 0) return errorResponse(err, { 'set-cookie': s.setCookies[0] });
      throw err;
    }
  };

  return new Elysia()
    .get('/auth/idp', ({ request }) => {
      const state = generateState();
      const verifier = generateCodeVerifier();
      const url = provider.authorizationUrl(state, verifier);
      const cookie = serializeCookie(OAUTH_COOKIE, `${state}.${verifier}`, { path: '/auth', maxAge: OAUTH_COOKIE_MAX_AGE_S, secure: secure(request) });
      return new Response(null, { status: 302, headers: { location: url.toString(), 'set-cookie': cookie, 'cache-control': 'no-store' } });
    })
    .get('/auth/callback', async ({ request }) => {
      const clearOauth = serializeCookie(OAUTH_COOKIE, '', { path: '/auth', maxAge: 0, secure: secure(request) });
      const html = (request.headers.get('accept') ?? '').includes('text/html');
      const fail = (err: ApiError): Response =>
        html ? messagePage(err.status, 'Sign-in failed', err.message, [['set-cookie', clearOauth]]) : errorResponse(err, { 'set-cookie': clearOauth });
      const q = new URL(request.url).searchParams;
      const pending = readCookie(request.headers.get('cookie'), OAUTH_COOKIE);
      const [expectedState, verifier] = pending?.split('.') ?? [];
      const state = q.get('state');
      if (!expectedState || !verifier) {
        return fail(new ApiError('OAUTH_STATE_INVALID', 'This sign-in expired or was started in another browser; please start again'));
      }
      if (state === null || !secretsEqual(state, expectedState)) {
        return fail(new ApiError('OAUTH_STATE_INVALID', 'The sign-in response does not match the sign-in this browser started; please start again'));
      }
      const providerError = q.get('error');
      if (providerError !== null) {
        const shown = providerError.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 64);
        return shown === 'access_denied'
          ? fail(new ApiError('OAUTH_DENIED', 'Sign-in was cancelled at the identity provider', { provider_error: shown }))
          : fail(new ApiError('OAUTH_PROVIDER_ERROR', 'The identity provider refused the sign-in', { provider_error: shown }));
      }
      const code = q.get('code');
      if (!code || code.length > 2048) return fail(new ApiError('INVALID_REQUEST', 'The sign-in response carries no authorization code'));
      let profile;
      try {
        profile = await provider.fetchProfile(await provider.exchangeCode(code, verifier));
      } catch (err) {
        if (!(err instanceof ProviderError)) throw err;
        if (err.rejectedCode !== undefined) {
          return fail(new ApiError('OAUTH_CODE_INVALID', 'The identity provider did not accept this sign-in (the code expired or was already used); please sign in again', { provider_error: err.rejectedCode }));
        }
        return fail(new ApiError('OAUTH_PROVIDER_ERROR', `The identity provider failed: ${err.message}`, { stage: err.stage }));
      }
      const result = await accounts.signIn(profile);
      // A fresh id at every sign-in: an id planted before sign-in is worthless.
      const previous = readCookie(request.headers.get('cookie'), SESSION_COOKIE);
      if (previous) await accounts.deleteSession(previous);
      const session = await accounts.createSession(result.user.id);
      if (result.firstKey) await accounts.holdKeyForReveal(session.token, result.firstKey.secret);
      const headers = new Headers({ location: '/dashboard', 'cache-control': 'no-store' });
      headers.append('set-cookie', sessionCookie(session.token, session.expiresAt, now(), secure(request)));
      headers.append('set-cookie', clearOauth);
      return new Response(null, { status: 302, headers });
    })
    .post('/auth/logout', async ({ request }) => {
      requireSameOrigin(request);
      const token = readCookie(request.headers.get('cookie'), SESSION_COOKIE);
      if (token) await accounts.deleteSession(token);
      return json({ signed_out: true }, 200, [clearSessionCookie(secure(request))]);
    })
    .get('/auth/me', ({ request }) =>
      withSession(request, async ({ session }) =>
        json({
          user: userView(session.user),
          identities: (await accounts.identitiesOf(session.user.id)).map((i) => ({ provider: i.provider, email: i.email, linked_at: new Date(i.createdAt).toISOString() })),
          session: { expires_at: new Date(session.expiresAt).toISOString() },
        }),
      ),
    )
    .get('/auth/tiers', async ({ request }) => {
      const caller = callerOf(request);
      const s = await sessionOfRequest(request, accounts, redirectUri, now());
      return json(
        {
          tiers: tiersView(),
          current: { tier: caller.tier, requests_per_minute: TIERS[caller.tier].requestsPerMinute, key_id: caller.keyId },
          account: s ? { tier: s.session.user.tier } : null,
        },
        200,
        s?.setCookies ?? [],
      );
    })
    .get('/auth/keys', ({ request }) => withSession(request, async ({ session }) => json({ keys: (await accounts.listKeys(session.user.id)).map(keyView) })))
    .post(
      '/auth/keys',
      ({ request }) =>
        withSession(request, async ({ session }) => {
          requireSameOrigin(request);
          const declared = Number(request.headers.get('content-length') ?? 0);
          if (declared > MAX_BODY_BYTES) throw new ApiError('PAYLOAD_TOO_LARGE', `Body larger than ${MAX_BODY_BYTES} bytes`, { limit: MAX_BODY_BYTES });
          const body = parseCreateKeyBody(request.headers.get('content-type'), await request.text());
          if (!body.ok) throw new ApiError(body.code, body.message, body.details);
          const user = session.user;
          const tier = body.value.tier ?? user.tier;
          if (tierRank(tier) > tierRank(user.tier)) {
            throw new ApiError('PRO_REQUIRED', 'Pro keys are invite-only; this account may create free keys', { tier, allowed_tiers: ['free'] });
          }
          const keys = await accounts.listKeys(user.id);
          // The cap is checked inside the store's transaction (this list may already be stale under concurrent creates).
          const created = await accounts.createKey(user.id, body.value.name ?? `Key ${keys.length + 1}`, tier, MAX_ACTIVE_KEYS).catch((e: unknown) => {
            if (e instanceof KeyCapReached) throw new ApiError('INVALID_REQUEST', `At most ${MAX_ACTIVE_KEYS} active keys per account; revoke one first`, { limit: MAX_ACTIVE_KEYS });
            throw e;
          });
          return json({ ...keyView(created.key), key: created.secret, notice: 'Store this key now: it is shown only once.' }, 201);
        }),
      { parse: 'none' },
    )
    .delete('/auth/keys/:id', ({ request, params }) =>
      withSession(request, async ({ session }) => {
        requireSameOrigin(request);
        const revoked = params.id.length <= 200 ? await accounts.revokeKey(params.id, session.user.id) : null;
        if (!revoked) throw new ApiError('NOT_FOUND', 'No such key', { id: params.id.slice(0, 200) });
        return json(keyView(revoked));
      }),
    )
    .get('/auth/usage', ({ request }) => withSession(request, async ({ session }) => json(await accounts.usageReport(session.user.id)))) as unknown as Elysia;
}
