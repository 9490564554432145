/**
 * A real, small OAuth 2.0 / OIDC identity provider on 127.0.0.1 for tests:
 * authorize (auto-consent or deny), token (checks client auth, code, PKCE
 * S256 verifier) and userinfo; also GitHub-shaped /user and /user/emails.
 */
import { createHash, randomBytes } from 'node:crypto';

export interface MockUser {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
}

/** `token-error`: the token endpoint rejects the code (`invalid_grant`); `token-server-error`: it fails (HTTP 500). */
export type Behaviour = 'approve' | 'deny' | 'token-error' | 'token-server-error' | 'userinfo-error' | 'userinfo-garbage';

export interface MockIdp {
  url: string;
  clientId: string;
  clientSecret: string;
  /** Who signs in next. */
  user: MockUser;
  behaviour: Behaviour;
  /** Every token request's verified PKCE result, for assertions. */
  tokenRequests: { pkceOk: boolean; clientOk: boolean }[];
  stop(): void;
}

/** Starts the provider on an ephemeral loopback port. */
export function startMockIdp(): MockIdp {
  const codes = new Map<string, { challenge: string; redirectUri: string; user: MockUser }>();
  const tokens = new Map<string, MockUser>();
  const idp: MockIdp = {
    url: '',
    clientId: 'test-client',
    clientSecret: 'test-secret',
    user: { sub: 'user-1', email: 'alice@example.test', email_verified: true, name: 'Alice' },
    behaviour: 'approve',
    tokenRequests: [],
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === '/authorize') {
        const q = url.searchParams;
        const redirect = q.get('redirect_uri');
        const state = q.get('state');
        if (!redirect || !state || q.get('client_id') !== idp.clientId || q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) {
          return new Response('bad authorize request', { status: 400 });
        }
        const back = new URL(redirect);
        back.searchParams.set('state', state);
        if (idp.behaviour === 'deny') {
          back.searchParams.set('error', 'access_denied');
        } else {
          const code = randomBytes(16).toString('hex');
          codes.set(code, { challenge: q.get('code_challenge')!, redirectUri: redirect, user: { ...idp.user } });
          back.searchParams.set('code', code);
        }
        return new Response(null, { status: 302, headers: { location: back.toString() } });
      }
      if (url.pathname === '/token' && req.method === 'POST') {
        const form = new URLSearchParams(await req.text());
        const expectedAuth = 'Basic ' + Buffer.from(`${idp.clientId}:${idp.clientSecret}`).toString('base64');
        const clientOk = req.headers.get('authorization') === expectedAuth;
        const entry = codes.get(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        const pkceOk = !!entry && createHash('sha256').update(verifier).digest('base64url') === entry.challenge;
        idp.tokenRequests.push({ pkceOk, clientOk });
        if (idp.behaviour === 'token-server-error') return new Response('upstream failure', { status: 500 });
        if (idp.behaviour === 'token-error' || !entry || !pkceOk || !clientOk || form.get('redirect_uri') !== entry.redirectUri) {
          return Response.json({ error: 'invalid_grant', error_description: 'bad code' }, { status: 400 });
        }
        codes.delete(form.get('code')!);
        const access = randomBytes(16).toString('hex');
        tokens.set(access, entry.user);
        return Response.json({ access_token: access, token_type: 'Bearer', expires_in: 3600 });
      }
      const bearer = (req.headers.get('authorization') ?? '').replace(/^Bearer /, '');
      const who = tokens.get(bearer);
      if (url.pathname === '/userinfo' || url.pathname === '/user' || url.pathname === '/user/emails') {
        if (idp.behaviour === 'userinfo-error') return new Response('boom', { status: 500 });
        if (idp.behaviour === 'userinfo-garbage') return new Response('<html>not json</html>', { status: 200 });
        if (!who) return Response.json({ error: 'invalid_token' }, { status: 401 });
        if (url.pathname === '/userinfo') return Response.json(who);
        if (url.pathname === '/user') return Response.json({ id: Number(who.sub.replace(/\D/g, '')) || 42, login: who.name ?? 'octo', name: who.name ?? null, email: null });
        return Response.json(who.email ? [{ email: who.email, primary: true, verified: who.email_verified !== false }] : []);
      }
      return new Response('not found', { status: 404 });
    },
  });
  idp.url = `http://127.0.0.1:${server.port}`;
  return idp;
}
