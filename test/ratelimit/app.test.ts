/**
 * The rate limiter inside the real app (src/host/start-server.ts over the fixture index),
 * with a pinned clock: the 61st anonymous request is a complete 429, free keys
 * get 200, public answers carry no X-RateLimit-* headers, exempt routes take
 * no token.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { RunningServer } from '../../src/host/start-server.ts';
import { createRateLimiter } from '../../src/http/ratelimit/index.ts';
import { startTestServer } from '../helpers/test-server.ts';

const T0 = Date.UTC(2026, 10, 22, 7, 0, 0, 400);
let server: RunningServer;
beforeAll(async () => {
  server = await startTestServer({}, { limiter: createRateLimiter({ now: () => T0 }) });
}, 180_000); // the first call in a run may build the fixture index
afterAll(() => server.stop());

const RL = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-tier'];

async function get(path: string, headers: Record<string, string> = {}): Promise<Response> {
  const r = await fetch(server.url + path, { headers });
  await r.arrayBuffer();
  return r;
}

test('exempt routes take no token and carry no headers; public answers count but carry none', async () => {
  for (let i = 0; i < 5; i++) {
    const h = await get('/health');
    expect(RL.some((n) => h.headers.has(n))).toBe(false);
  }
  const pub = await get('/v1/ip/8.8.8.8');
  expect(pub.status).toBe(200);
  expect(pub.headers.get('cache-control')).toContain('public');
  expect(RL.some((n) => pub.headers.has(n))).toBe(false);
  const cur = await get('/v1/ip/current');
  expect(cur.headers.get('cache-control')).toContain('no-store');
  expect(cur.headers.get('x-ratelimit-remaining')).toBe('58'); // the public lookup took one, /health none
  expect(cur.headers.get('x-ratelimit-tier')).toBe('anonymous');
});

test('anonymous: the 61st request is 429 RATE_LIMITED with the four headers, Retry-After and every detail', async () => {
  // Two requests were made by the previous test (same caller, same pinned instant).
  for (let i = 3; i <= 60; i++) expect((await get('/v1/ip/current')).status).toBe(200);
  const r = await fetch(server.url + '/v1/ip/current');
  expect(r.status).toBe(429);
  const reset = Math.ceil((T0 + 60_000) / 1000);
  expect(r.headers.get('x-ratelimit-limit')).toBe('60');
  expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
  expect(r.headers.get('x-ratelimit-reset')).toBe(String(reset));
  expect(r.headers.get('x-ratelimit-tier')).toBe('anonymous');
  expect(r.headers.get('retry-after')).toBe('1');
  const body = (await r.json()) as { error: string; code: string; details: Record<string, unknown> };
  expect(body.code).toBe('RATE_LIMITED');
  expect(body.details).toEqual({ limit: 60, remaining: 0, reset_at: new Date(reset * 1000).toISOString(), upgrade_url: '/pricing' });
  // A public route is refused too, and its 429 carries the headers.
  const pub = await get('/v1/ip/8.8.8.8');
  expect(pub.status).toBe(429);
  expect(RL.every((n) => pub.headers.has(n))).toBe(true);
});

test('a free key from the same address has its own bucket of 200', async () => {
  const key = (await server.services.accounts.grantKeyByEmail('ratelimit-free@example.test', 'free', 'rl')).created.secret;
  for (let i = 1; i <= 200; i++) {
    const r = await get('/v1/ip/current', { 'x-api-key': key });
    expect(r.status).toBe(200);
    if (i === 1) expect(r.headers.get('x-ratelimit-limit')).toBe('200');
  }
  const r = await get('/v1/ip/current', { 'x-api-key': key });
  expect(r.status).toBe(429);
  expect(r.headers.get('x-ratelimit-tier')).toBe('free');
});
