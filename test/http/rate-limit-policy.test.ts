/** The server applies the rate-limit module's policy: unknown paths take a token, operator routes do not. */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { UNREACHABLE_OIDC_ENV } from '../helpers/oauth-env.ts';

let server: RunningServer;
beforeAll(async () => {
  server = await startTestServer();
}, 120_000);
afterAll(() => server.stop());

const remaining = async (path: string, init?: RequestInit) => {
  const res = await fetch(`${server.url}${path}`, init);
  await res.arrayBuffer();
  return { status: res.status, remaining: res.headers.get('x-ratelimit-remaining') };
};

test('a 404 on an unknown path costs a token (scanners are limited too)', async () => {
  const first = await remaining('/v1/nope');
  const second = await remaining('/v1/nope');
  expect(first.status).toBe(404);
  expect(Number(first.remaining)).toBe(Number(second.remaining) + 1);
});

test('health checks, metrics scrapes and preflights take none', async () => {
  expect((await remaining('/health')).remaining).toBeNull();
  expect((await remaining('/metrics')).remaining).toBeNull();
  expect((await remaining('/v1/ip/1.1.1.1', { method: 'OPTIONS', headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' } })).remaining).toBeNull();
});

/**
 * Issue 17: /auth/* took no token, so the sign-in redirect (a fresh state,
 * verifier and cookie each time), the callback (a call to the identity
 * provider) and every session lookup were free to repeat at any rate.
 */
test('sign-in and account routes take a token from the caller like any route', async () => {
  const withAuth = await startTestServer({
    IPINTEL_TRUST_PROXY: 'loopback',
    ...UNREACHABLE_OIDC_ENV,
  });
  try {
    const statuses = async (client: string, path: string, n: number) => {
      const out = new Map<number, number>();
      for (let i = 0; i < n; i++) {
        const res = await fetch(`${withAuth.url}${path}`, { redirect: 'manual', headers: { 'x-forwarded-for': client } });
        await res.arrayBuffer();
        out.set(res.status, (out.get(res.status) ?? 0) + 1);
      }
      return Object.fromEntries(out);
    };
    expect(await statuses('198.51.100.1', '/auth/idp', 65)).toEqual({ 302: 60, 429: 5 });
    expect(await statuses('198.51.100.2', '/auth/callback?state=x&code=y', 62)).toEqual({ 400: 60, 429: 2 });
    expect(await statuses('198.51.100.3', '/auth/me', 61)).toEqual({ 401: 60, 429: 1 });
    expect(await statuses('198.51.100.4', '/dashboard', 61)).toEqual({ 200: 60, 429: 1 });
    // Another caller's budget is untouched.
    expect(await statuses('198.51.100.5', '/auth/idp', 1)).toEqual({ 302: 1 });
  } finally {
    await withAuth.stop();
  }
});

test('the policy is read per route of the route table: a path the router takes for an exempt route is exempt too', async () => {
  // One trailing slash is the same route (route-table.ts), so the same policy.
  const health = await remaining('/health/');
  expect(health.status).toBe(200);
  expect(health.remaining).toBeNull();
  // A path of no route is judged by the path: the files browsers ask for take none.
  expect((await remaining('/favicon.ico')).remaining).toBeNull();
});
