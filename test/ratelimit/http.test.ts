/**
 * The limiter behind a real HTTP server on 127.0.0.1 (memory store, injected
 * clock): the 429 of spec 8 rule 3, header presence per cache class of spec
 * 4.9 (rules 1-2), exempt routes, and concurrency.
 */
import { afterAll, beforeEach, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { createRateLimiter, type RateLimiter } from '../../src/http/ratelimit/index.ts';
import { createLimitedHandler } from './fixtures/limited-server.ts';

const T0 = Date.UTC(2026, 5, 1, 8, 30, 0, 250);
const clock = { t: T0 };
let limiter: RateLimiter = createRateLimiter({ now: () => clock.t });
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: (req, srv) => createLimitedHandler(limiter, null)(req, srv),
});
const base = `http://127.0.0.1:${server.port}`;
afterAll(() => server.stop(true));
beforeEach(() => {
  clock.t = T0;
  limiter = createRateLimiter({ now: () => clock.t });
});

const RL = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-tier'];
const hasAll = (r: Response) => RL.every((h) => r.headers.has(h));
const hasNone = (r: Response) => RL.every((h) => !r.headers.has(h));

async function get(path: string, headers: Record<string, string> = {}): Promise<Response> {
  const r = await fetch(base + path, { headers });
  await r.arrayBuffer();
  return r;
}

describe('429 RATE_LIMITED (spec 8 rule 3)', () => {
  for (const [tier, cap, headers] of [
    ['anonymous', 60, {}],
    ['free', 200, { 'x-api-key': 'free-1' }],
    ['pro', 600, { 'x-api-key': 'pro-1' }],
  ] as const) {
    test(`${tier}: ${cap} answered, request ${cap + 1} is 429 with every header and detail`, async () => {
      for (let i = 1; i <= cap; i++) {
        const r = await get('/v1/ip/current', headers);
        expect(r.status).toBe(200);
        expect(r.headers.get('x-ratelimit-remaining')).toBe(String(cap - i));
      }
      const r = await fetch(base + '/v1/ip/current', { headers });
      expect(r.status).toBe(429);
      const resetAt = Math.ceil((T0 + 60_000) / 1000);
      expect(r.headers.get('x-ratelimit-limit')).toBe(String(cap));
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(r.headers.get('x-ratelimit-reset')).toBe(String(resetAt));
      expect(r.headers.get('x-ratelimit-tier')).toBe(tier);
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.headers.get('cache-control')).toBe('no-store');
      expect(r.headers.get('content-type')).toContain('application/json');
      const body = (await r.json()) as { error: string; code: string; details: Record<string, unknown> };
      expect(body.code).toBe('RATE_LIMITED');
      expect(typeof body.error).toBe('string');
      expect(body.details).toEqual({
        limit: cap,
        remaining: 0,
        reset_at: new Date(resetAt * 1000).toISOString(),
        upgrade_url: '/pricing',
      });
      // reset_at is the same instant as X-RateLimit-Reset, in ISO 8601 UTC.
      expect(Date.parse(body.details.reset_at as string) / 1000).toBe(resetAt);
      expect(body.details.reset_at as string).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/);
    });
  }

  test('after the clock advances one emission interval, one more request is answered', async () => {
    for (let i = 0; i < 60; i++) await get('/v1/ip/current');
    expect((await get('/v1/ip/current')).status).toBe(429);
    clock.t += 1000;
    const r = await get('/v1/ip/current');
    expect(r.status).toBe(200);
    expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
    expect((await get('/v1/ip/current')).status).toBe(429);
  });

  test('a 429 on a cacheable route still carries the headers (and is not cacheable)', async () => {
    for (let i = 0; i < 60; i++) await get('/v1/ip/192.0.2.1');
    const r = await get('/v1/ip/192.0.2.1');
    expect(r.status).toBe(429);
    expect(hasAll(r)).toBe(true);
    expect(r.headers.get('cache-control')).toBe('no-store');
  });

  test('IPINTEL_UPGRADE_URL, when set, is the upgrade_url', async () => {
    const custom = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: createLimitedHandler(createRateLimiter({ now: () => T0 }), 'https://example.test/upgrade') });
    try {
      for (let i = 0; i < 60; i++) await (await fetch(`http://127.0.0.1:${custom.port}/v1/ip/current`)).arrayBuffer();
      const body = (await (await fetch(`http://127.0.0.1:${custom.port}/v1/ip/current`)).json()) as { details: { upgrade_url: string } };
      expect(body.details.upgrade_url).toBe('https://example.test/upgrade');
    } finally {
      custom.stop(true);
    }
  });
});

describe('header presence per cache class (spec 4.9, spec 8 rules 1-2)', () => {
  test('explicit lookups (public, max-age=86400) omit them', async () => {
    for (const path of ['/v1/ip/192.0.2.1', '/192.0.2.1', '/v1/assessment?ipv4=192.0.2.1&ipv6=2001:db8::1']) {
      const r = await get(path);
      expect(r.status).toBe(200);
      expect(r.headers.get('cache-control')).toBe('public, max-age=86400');
      expect(hasNone(r)).toBe(true);
    }
  });

  test('a 304 revalidation of a public answer omits them (a cache would merge them into the shared copy)', async () => {
    const r = await get('/192.0.2.1', { 'if-none-match': '"v1"' });
    expect(r.status).toBe(304);
    expect(hasNone(r)).toBe(true);
  });

  test('auto-detect routes (no-store) carry them', async () => {
    for (const path of ['/v1/ip/current', '/', '/v1/assessment']) {
      const r = await get(path);
      expect(r.status).toBe(200);
      expect(r.headers.get('cache-control')).toContain('no-store');
      expect(hasAll(r)).toBe(true);
    }
  });

  test('Pro include=rdap_contacts (no-store) carries them with the pro tier', async () => {
    const r = await get('/v1/ip/192.0.2.1?include=rdap_contacts', { 'x-api-key': 'pro-1' });
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('x-ratelimit-tier')).toBe('pro');
    expect(r.headers.get('x-ratelimit-limit')).toBe('600');
    expect(hasAll(r)).toBe(true);
  });

  test('POST /v1/crawler/verify (no-store) carries them', async () => {
    const r = await fetch(base + '/v1/crawler/verify', { method: 'POST', body: '{"ip":"192.0.2.1"}', headers: { 'content-type': 'application/json' } });
    await r.arrayBuffer();
    expect(r.status).toBe(200);
    expect(hasAll(r)).toBe(true);
  });

  test('an error on a cacheable route (no-store) carries them', async () => {
    const r = await get('/v1/ip/bad');
    expect(r.status).toBe(400);
    expect(hasAll(r)).toBe(true);
  });

  test('a response without Cache-Control carries them', async () => {
    const r = await get('/v1/asn/AS13335');
    expect(r.headers.has('cache-control')).toBe(false);
    expect(hasAll(r)).toBe(true);
  });

  test('a cacheable answer still takes a token', async () => {
    await get('/v1/ip/192.0.2.1');
    await get('/v1/ip/192.0.2.1');
    expect((await get('/v1/ip/current')).headers.get('x-ratelimit-remaining')).toBe('57');
  });

  test('exempt routes take no token and carry no headers', async () => {
    for (let i = 0; i < 100; i++) {
      const r = await get('/health');
      expect(r.status).toBe(200);
      expect(hasNone(r)).toBe(true);
    }
    const pre = await fetch(base + '/v1/ip/current', { method: 'OPTIONS' });
    await pre.arrayBuffer();
    expect(hasNone(pre)).toBe(true);
    expect((await get('/v1/ip/current')).headers.get('x-ratelimit-remaining')).toBe('59');
  });
});

describe('concurrency', () => {
  test('300 simultaneous requests on one free key: exactly 200 answered, 100 refused', async () => {
    const results = await Promise.all(
      Array.from({ length: 300 }, () => fetch(base + '/v1/ip/current', { headers: { 'x-api-key': 'free-burst' } }).then(async (r) => (await r.arrayBuffer(), r.status))),
    );
    expect(results.filter((s) => s === 200).length).toBe(200);
    expect(results.filter((s) => s === 429).length).toBe(100);
  });

  test('IPv6 callers rotating addresses inside one /64 share one bucket', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++) statuses.push((await get('/v1/ip/current', { 'x-test-client-ip': `2001:db8:aa:bb::${(i + 1).toString(16)}` })).status);
    expect(statuses.slice(0, 60).every((s) => s === 200)).toBe(true);
    expect(statuses[60]).toBe(429);
    expect((await get('/v1/ip/current', { 'x-test-client-ip': '2001:db8:aa:bc::1' })).status).toBe(200);
  });
});
