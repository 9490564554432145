/** /auth/* against a real mock OIDC provider on loopback: sign-in, cookies, keys, tiers, usage, logout. */
import { afterAll, beforeAll, beforeEach, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { startMockIdp, type MockIdp } from './helpers/mock-idp.ts';
import { oidcEnv, startTestApp, type TestApp } from './helpers/test-app.ts';
import { TestClient } from './helpers/client.ts';

let idp: MockIdp;
let app: TestApp;

beforeAll(async () => {
  idp = startMockIdp();
  app = await startTestApp(oidcEnv(idp.url, idp.clientId, idp.clientSecret));
});
afterAll(async () => {
  await app.stop();
  idp.stop();
});
beforeEach(() => {
  idp.behaviour = 'approve';
});

let userCounter = 0;
/** Signs a fresh (or given) user in; returns the client holding the session cookie. */
async function signIn(user?: { sub: string; email?: string; name?: string }): Promise<TestClient> {
  idp.user = user ?? { sub: `sub-${++userCounter}`, email: `user${userCounter}@example.test`, email_verified: true, name: `User ${userCounter}` };
  const client = new TestClient();
  const { res, hops } = await client.follow(`${app.url}/auth/idp`);
  expect(res.status).toBe(200);
  expect(new URL(hops.at(-1)!.url).pathname).toBe('/dashboard');
  expect(client.jar.has('ipintel_session')).toBe(true);
  await res.body?.cancel();
  return client;
}

const json = (client: TestClient, path: string, init: RequestInit = {}) => client.fetch(`${app.url}${path}`, init);

describe('sign-in through the OIDC provider', () => {
  test('full flow: state + PKCE, session cookie flags, lands on /dashboard with the first key shown once', async () => {
    idp.user = { sub: 'flow-1', email: 'Flow@Example.test', email_verified: true, name: 'Flo' };
    const client = new TestClient();
    const { res, hops } = await client.follow(`${app.url}/auth/idp`, { headers: { accept: 'text/html' } });
    expect(hops.map((h) => h.status)).toEqual([302, 302, 302, 200]);
    // 1: /auth/idp sets the state cookie and sends the browser to the provider with PKCE S256.
    const authorize = new URL(hops[1]!.url);
    expect(authorize.origin).toBe(idp.url);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('state')!.length).toBeGreaterThan(20);
    const stateCookie = hops[0]!.setCookies.find((c) => c.startsWith('ipintel_oauth='))!;
    expect(stateCookie).toContain('HttpOnly');
    expect(stateCookie).toContain('SameSite=Lax');
    expect(stateCookie).toContain('Path=/auth');
    // 3: the callback sets the session cookie and clears the state cookie.
    expect(new URL(hops[2]!.url).pathname).toBe('/auth/callback');
    const sessionCookie = hops[2]!.setCookies.find((c) => c.startsWith('ipintel_session='))!;
    expect(sessionCookie).toMatch(/HttpOnly/);
    expect(sessionCookie).toMatch(/SameSite=Lax/);
    expect(sessionCookie).toMatch(/Path=\//);
    expect(sessionCookie).toMatch(/Max-Age=\d{6,}/);
    expect(sessionCookie).not.toMatch(/Secure/); // plain http on loopback
    expect(hops[2]!.setCookies.some((c) => c.startsWith('ipintel_oauth=;') && c.includes('Max-Age=0'))).toBe(true);
    expect(idp.tokenRequests.at(-1)).toEqual({ pkceOk: true, clientOk: true });
    // 4: the dashboard shows the first key, once.
    expect(new URL(hops[3]!.url).pathname).toBe('/dashboard');
    const page = await res.text();
    const shown = page.match(/ipi_[A-Za-z0-9_-]{43}/)?.[0];
    expect(shown).toBeDefined();
    const again = await (await client.fetch(`${app.url}/dashboard`)).text();
    expect(again).not.toContain(shown!);
    // The shown key works and resolves to the free tier.
    const echo = await (await fetch(`${app.url}/v1/echo`, { headers: { 'x-api-key': shown! } })).json() as any;
    expect(echo.tier).toBe('free');
    const me = await (await json(client, '/auth/me')).json() as any;
    expect(me.user.email).toBe('flow@example.test');
    expect(me.user.tier).toBe('free');
    expect(me.identities).toEqual([expect.objectContaining({ provider: 'oidc', email: 'flow@example.test' })]);
  });

  test('a second sign-in of the same identity reuses the account and creates no new key', async () => {
    const user = { sub: 'repeat-1', email: 'repeat@example.test', name: 'R' };
    const first = await signIn(user);
    const firstMe = await (await json(first, '/auth/me')).json() as any;
    const second = await signIn(user);
    const secondMe = await (await json(second, '/auth/me')).json() as any;
    expect(secondMe.user.id).toBe(firstMe.user.id);
    const keys = (await (await json(second, '/auth/keys')).json() as any).keys;
    expect(keys).toHaveLength(1);
    expect(second.jar.get('ipintel_session')).not.toBe(first.jar.get('ipintel_session'));
  });

  test('Secure cookies when the public redirect URI is https', async () => {
    const secureApp = await startTestApp({ ...oidcEnv(idp.url, idp.clientId, idp.clientSecret), IPINTEL_OAUTH_REDIRECT_URI: 'https://ipintel.example/auth/callback' });
    try {
      const res = await fetch(`${secureApp.url}/auth/idp`, { redirect: 'manual' });
      expect(res.status).toBe(302);
      expect(res.headers.get('set-cookie')).toContain('Secure');
      expect(new URL(res.headers.get('location')!).searchParams.get('redirect_uri')).toBe('https://ipintel.example/auth/callback');
    } finally {
      await secureApp.stop();
    }
  });

  test('state mismatch is refused with 400 OAUTH_STATE_INVALID and no session', async () => {
    const client = new TestClient();
    const start = await client.fetch(`${app.url}/auth/idp`);
    const authorize = new URL(start.headers.get('location')!);
    authorize.searchParams.set('state', 'forged-state-value-forged-state-value');
    const back = await client.fetch(authorize.toString());
    const res = await client.fetch(back.headers.get('location')!);
    expect(res.status).toBe(400);
    const body = await res.json() as any;
    expect(body.code).toBe('OAUTH_STATE_INVALID');
    expect(body).toHaveProperty('details');
    expect(client.jar.has('ipintel_session')).toBe(false);
  });

  test('callback without the state cookie (other browser) is refused; HTML when the browser asks for it', async () => {
    const client = new TestClient();
    const start = await client.fetch(`${app.url}/auth/idp`);
    const back = await client.fetch(start.headers.get('location')!);
    const res = await fetch(back.headers.get('location')!, { headers: { accept: 'text/html' }, redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(await res.text()).toContain('Sign in again');
  });

  test('denied consent ends on 403 OAUTH_DENIED', async () => {
    idp.behaviour = 'deny';
    const client = new TestClient();
    const { res } = await client.follow(`${app.url}/auth/idp`);
    expect(res.status).toBe(403);
    expect((await res.json() as any).code).toBe('OAUTH_DENIED');
    expect(client.jar.has('ipintel_session')).toBe(false);
  });

  test('a code the provider rejects (invalid_grant) is a bad request: 400 OAUTH_CODE_INVALID, and the page offers to sign in again', async () => {
    idp.behaviour = 'token-error';
    const client = new TestClient();
    const { res } = await client.follow(`${app.url}/auth/idp`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.code).toBe('OAUTH_CODE_INVALID');
    expect(body.details.provider_error).toBe('invalid_grant');
    expect(client.jar.has('ipintel_session')).toBe(false);
    // The browser gets the HTML page with the way back to sign-in.
    const browser = new TestClient();
    const html = await browser.follow(`${app.url}/auth/idp`, { headers: { accept: 'text/html' } });
    expect(html.res.status).toBe(400);
    expect(html.res.headers.get('content-type')).toStartWith('text/html');
    const page = await html.res.text();
    expect(page).toContain('href="/auth/idp"');
    expect(page).toContain('Sign in again');
  });

  for (const [behaviour, stage] of [
    ['token-server-error', 'token'],
    ['userinfo-error', 'userinfo'],
    ['userinfo-garbage', 'userinfo'],
  ] as const) {
    test(`${behaviour} ends on 502 OAUTH_PROVIDER_ERROR (stage ${stage}), not a 500`, async () => {
      idp.behaviour = behaviour;
      const client = new TestClient();
      const { res } = await client.follow(`${app.url}/auth/idp`);
      expect(res.status).toBe(502);
      const body = await res.json() as any;
      expect(body.code).toBe('OAUTH_PROVIDER_ERROR');
      expect(body.details.stage).toBe(stage);
      expect(client.jar.has('ipintel_session')).toBe(false);
    });
  }

  test('a provider that is unreachable ends on 502, not a 500', async () => {
    const dead = await startTestApp({ ...oidcEnv(idp.url, idp.clientId, idp.clientSecret), IPINTEL_OAUTH_TOKEN_URL: 'http://127.0.0.1:1/token' });
    try {
      const client = new TestClient();
      const { res } = await client.follow(`${dead.url}/auth/idp`);
      expect(res.status).toBe(502);
      expect((await res.json() as any).details.stage).toBe('token');
    } finally {
      await dead.stop();
    }
  });

  test('callback with a code but no cookie and garbage query answers 400, never 500', async () => {
    for (const q of ['', '?code=x', '?state=a&code=b', "?state=' OR 1=1 --&code=x", '?error=access_denied']) {
      const res = await fetch(`${app.url}/auth/callback${q}`, { redirect: 'manual' });
      expect(res.status).toBe(400);
      expect((await res.json() as any).code).toBe('OAUTH_STATE_INVALID');
    }
  });
});

describe('logout', () => {
  test('POST /auth/logout ends the session server-side and clears the cookie', async () => {
    const client = await signIn();
    const token = client.jar.get('ipintel_session')!;
    expect((await json(client, '/auth/me')).status).toBe(200);
    const out = await json(client, '/auth/logout', { method: 'POST' });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/^ipintel_session=;.*Max-Age=0/);
    // The old token no longer works even if replayed.
    const replay = await fetch(`${app.url}/auth/me`, { headers: { cookie: `ipintel_session=${token}` } });
    expect(replay.status).toBe(401);
    expect((await replay.json() as any).code).toBe('UNAUTHORIZED');
  });

  test('cross-site logout attempts are refused', async () => {
    const client = await signIn();
    const res = await json(client, '/auth/logout', { method: 'POST', headers: { origin: 'https://evil.example' } });
    expect(res.status).toBe(403);
    expect((await json(client, '/auth/me')).status).toBe(200);
  });
});

describe('session-protected routes', () => {
  for (const [method, path] of [
    ['GET', '/auth/me'],
    ['GET', '/auth/keys'],
    ['POST', '/auth/keys'],
    ['DELETE', '/auth/keys/abc'],
    ['GET', '/auth/usage'],
  ] as const) {
    test(`${method} ${path} without a session: 401 UNAUTHORIZED with no-store`, async () => {
      const res = await fetch(`${app.url}${path}`, { method });
      expect(res.status).toBe(401);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.json() as any).toEqual({ error: expect.any(String), code: 'UNAUTHORIZED', details: {} });
    });
  }

  test('an unknown session cookie is unauthorized', async () => {
    const res = await fetch(`${app.url}/auth/me`, { headers: { cookie: 'ipintel_session=nonsense' } });
    expect(res.status).toBe(401);
  });
});

describe('keys', () => {
  test('create shows the value once, list hides secrets, revoke gives an immediate 401 INVALID_API_KEY', async () => {
    const client = await signIn();
    const created = await json(client, '/auth/keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'ci runner' }) });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const key = await created.json() as any;
    expect(key.key).toMatch(/^ipi_[A-Za-z0-9_-]{43}$/);
    expect(key.prefix).toBe(key.key.slice(0, 12));
    expect(key).toMatchObject({ name: 'ci runner', tier: 'free', status: 'active', last_used_at: null, revoked_at: null });

    const listRes = await json(client, '/auth/keys');
    expect(listRes.headers.get('cache-control')).toBe('no-store');
    const listText = await listRes.text();
    expect(listText).not.toContain(key.key);
    const list = JSON.parse(listText).keys as { id: string; name: string }[];
    expect(list.map((k) => k.name)).toEqual(['Default key', 'ci runner']);

    expect((await fetch(`${app.url}/v1/echo`, { headers: { 'x-api-key': key.key } })).status).toBe(200);
    const del = await json(client, `/auth/keys/${key.id}`, { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect((await del.json() as any).status).toBe('revoked');
    const after = await fetch(`${app.url}/v1/echo`, { headers: { 'x-api-key': key.key } });
    expect(after.status).toBe(401);
    expect((await after.json() as any).code).toBe('INVALID_API_KEY');
    const listed = (await (await json(client, '/auth/keys')).json() as any).keys.find((k: { id: string }) => k.id === key.id);
    expect(listed.status).toBe('revoked');
  });

  test("another user's key id is 404 and stays active", async () => {
    const alice = await signIn();
    const bob = await signIn();
    const aliceKey = (await (await json(alice, '/auth/keys')).json() as any).keys[0];
    const res = await json(bob, `/auth/keys/${aliceKey.id}`, { method: 'DELETE' });
    expect(res.status).toBe(404);
    expect((await res.json() as any).code).toBe('NOT_FOUND');
    expect((await (await json(alice, '/auth/keys')).json() as any).keys[0].status).toBe('active');
  });

  test('a free user cannot create a pro key (invite-only)', async () => {
    const client = await signIn();
    const res = await json(client, '/auth/keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"tier":"pro"}' });
    expect(res.status).toBe(403);
    expect((await res.json() as any).code).toBe('PRO_REQUIRED');
  });

  test('bad bodies get clear 4xx errors', async () => {
    const client = await signIn();
    const post = (body: string, type = 'application/json') => json(client, '/auth/keys', { method: 'POST', headers: { 'content-type': type }, body });
    const cases: [Response, number, string][] = [
      [await post('{not json'), 400, 'INVALID_REQUEST'],
      [await post('[1,2]'), 400, 'INVALID_REQUEST'],
      [await post('{"name": 5}'), 400, 'INVALID_REQUEST'],
      [await post('{"name": ""}'), 400, 'INVALID_REQUEST'],
      [await post(JSON.stringify({ name: 'x'.repeat(65) })), 400, 'INVALID_REQUEST'],
      [await post('{"name":"a\\u0000b"}'), 400, 'INVALID_REQUEST'],
      [await post('{"owner":"someone"}'), 400, 'INVALID_REQUEST'],
      [await post('{"tier":"gold"}'), 400, 'INVALID_REQUEST'],
      [await post('name=x', 'application/x-www-form-urlencoded'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [await post(JSON.stringify({ name: 'y'.repeat(5000) })), 413, 'PAYLOAD_TOO_LARGE'],
    ];
    for (const [res, status, code] of cases) {
      expect(res.status).toBe(status);
      expect((await res.json() as any).code).toBe(code);
    }
    expect((await (await json(client, '/auth/keys')).json() as any).keys).toHaveLength(1);
  });

  test('cross-site key creation is refused', async () => {
    const client = await signIn();
    const res = await json(client, '/auth/keys', { method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(403);
    expect((await (await json(client, '/auth/keys')).json() as any).keys).toHaveLength(1);
  });

  test('SQL injection attempts in names, ids, cookies and keys are inert data', async () => {
    const client = await signIn();
    const evil = ["'; DROP TABLE api_keys; --", '" OR 1=1 --', "x' UNION SELECT secret_hash FROM api_keys --", 'Robert"); DELETE FROM users;--'];
    for (const name of evil) {
      const res = await json(client, '/auth/keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
      expect(res.status).toBe(201);
    }
    const names = (await (await json(client, '/auth/keys')).json() as any).keys.map((k: { name: string }) => k.name);
    expect(names).toEqual(['Default key', ...evil]);
    for (const id of ["1' OR '1'='1", '1; DROP TABLE api_keys', '%27%20OR%201%3D1--']) {
      const res = await json(client, `/auth/keys/${encodeURIComponent(id)}`, { method: 'DELETE' });
      expect(res.status).toBe(404);
    }
    const cookieRes = await fetch(`${app.url}/auth/me`, { headers: { cookie: "ipintel_session=' OR 1=1 --" } });
    expect(cookieRes.status).toBe(401);
    const keyRes = await fetch(`${app.url}/v1/echo`, { headers: { 'x-api-key': "ipi_' OR 1=1 --" } });
    expect(keyRes.status).toBe(401);
    // Everything still there and working.
    expect((await (await json(client, '/auth/keys')).json() as any).keys.filter((k: { status: string }) => k.status === 'active')).toHaveLength(5);
  });
});

describe('tiers and usage', () => {
  test('/auth/tiers lists every tier and the caller tier from the API key', async () => {
    const anon = await (await fetch(`${app.url}/auth/tiers`)).json() as any;
    expect(anon.tiers).toEqual([
      expect.objectContaining({ tier: 'anonymous', requests_per_minute: 60 }),
      expect.objectContaining({ tier: 'free', requests_per_minute: 200 }),
      expect.objectContaining({ tier: 'pro', requests_per_minute: 600 }),
    ]);
    expect(anon.current).toEqual({ tier: 'anonymous', requests_per_minute: 60, key_id: null });
    expect(anon.account).toBeNull();

    const { created } = await app.accounts.grantKeyByEmail('vip@example.test', 'pro', 'invite');
    const pro = await (await fetch(`${app.url}/auth/tiers`, { headers: { 'x-api-key': created.secret } })).json() as any;
    expect(pro.current).toEqual({ tier: 'pro', requests_per_minute: 600, key_id: created.key.id });

    const client = await signIn();
    const free = (await (await json(client, '/auth/keys')).json() as any).keys[0];
    const secret = (await (await json(client, '/auth/keys', { method: 'POST' })).json() as any).key;
    const withSession = await (await json(client, '/auth/tiers', { headers: { 'x-api-key': secret } })).json() as any;
    expect(withSession.current.tier).toBe('free');
    expect(withSession.account).toEqual({ tier: 'free' });
    expect(free.tier).toBe('free');
  });

  test('/auth/usage counts N keyed requests per key, before and after a flush', async () => {
    const client = await signIn();
    const a = (await (await json(client, '/auth/keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"a"}' })).json() as any);
    const b = (await (await json(client, '/auth/keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"b"}' })).json() as any);
    for (let i = 0; i < 7; i++) expect((await fetch(`${app.url}/v1/echo`, { headers: { 'x-api-key': a.key } })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await fetch(`${app.url}/v1/echo`, { headers: { 'x-api-key': b.key } })).status).toBe(200);
    const check = async () => {
      const usage = await (await json(client, '/auth/usage')).json() as any;
      const byName = Object.fromEntries(usage.keys.map((k: { name: string; totals: unknown }) => [k.name, k.totals]));
      expect(byName.a).toEqual({ last_hour: 7, last_24h: 7, last_30d: 7 });
      expect(byName.b).toEqual({ last_hour: 3, last_24h: 3, last_30d: 3 });
      expect(usage.totals.last_hour).toBe(10);
      const keyA = usage.keys.find((k: { name: string }) => k.name === 'a');
      expect(keyA.per_minute).toHaveLength(60);
      expect(keyA.per_hour).toHaveLength(24);
      expect(keyA.per_day).toHaveLength(30);
      expect(keyA.per_minute.reduce((s: number, m: { count: number }) => s + m.count, 0)).toBe(7);
    };
    await check(); // served from memory
    await app.accounts.flush();
    await check(); // served from SQLite
    const listed = (await (await json(client, '/auth/keys')).json() as any).keys.find((k: { name: string }) => k.name === 'a');
    expect(listed.last_used_at).not.toBeNull();
  });
});

describe('unknown routes', () => {
  test('/auth/nope is a 404 in the spec shape', async () => {
    const res = await fetch(`${app.url}/auth/nope`);
    expect(res.status).toBe(404);
    expect((await res.json() as any).code).toBe('NOT_FOUND');
  });
});

describe('session rotation over HTTP', () => {
  test('after a day the next response replaces the session cookie; errors carry the new cookie too', async () => {
    const clock = { t: Date.now() };
    const now = () => clock.t;
    const rotApp = await startTestApp(oidcEnv(idp.url, idp.clientId, idp.clientSecret), { accounts: { now }, now });
    try {
      idp.user = { sub: 'rotating', email: 'rot@example.test', name: 'Rot' };
      const client = new TestClient();
      await client.follow(`${rotApp.url}/auth/idp`);
      const original = client.jar.get('ipintel_session')!;
      const plain = await client.fetch(`${rotApp.url}/auth/me`);
      expect(plain.headers.get('set-cookie')).toBeNull();
      clock.t += 25 * 3_600_000;
      // An error response (404 for an unknown key) still hands over the rotated id.
      const res = await client.fetch(`${rotApp.url}/auth/keys/unknown`, { method: 'DELETE' });
      expect(res.status).toBe(404);
      const rotated = client.jar.get('ipintel_session')!;
      expect(rotated).not.toBe(original);
      expect(res.headers.get('set-cookie')).toMatch(/^ipintel_session=[^;]+; Path=\/; Max-Age=2592000; HttpOnly; SameSite=Lax$/);
      expect((await client.fetch(`${rotApp.url}/auth/me`)).status).toBe(200);
      clock.t += 61_000; // past the grace period of the old id
      const old = await fetch(`${rotApp.url}/auth/me`, { headers: { cookie: `ipintel_session=${original}` } });
      expect(old.status).toBe(401);
    } finally {
      await rotApp.stop();
    }
  });
});
