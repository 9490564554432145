/**
 * Spec section 8 (headers only) by cache class: answers that are not
 * shared-cacheable carry the four X-RateLimit-* headers with the caller's
 * tier; successful public answers omit them. The limiter's own behaviour is
 * tested in test/ratelimit.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { startMockRdap, type MockRdapServer } from '../rdap/rdap-feeds.ts';
import { call, type Answer } from './support.ts';

let server: RunningServer;
let rdap: MockRdapServer;
let pro: string;
let free: string;
beforeAll(async () => {
  rdap = startMockRdap();
  server = await startTestServer({ IPINTEL_RDAP_BASE: rdap.base });
  pro = (await server.services.accounts.grantKeyByEmail('pro-rl@example.com', 'pro', 'test')).created.secret;
  free = (await server.services.accounts.grantKeyByEmail('free-rl@example.com', 'free', 'test')).created.secret;
}, 120_000);
afterAll(async () => {
  await server.stop();
  rdap.stop();
});

const NAMES = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-tier'];

function expectHeaders(a: Answer, tier: string, limit: number): void {
  for (const n of NAMES) expect({ n, present: a.headers.has(n) }).toEqual({ n, present: true });
  expect(a.headers.get('x-ratelimit-tier')).toBe(tier);
  expect(Number(a.headers.get('x-ratelimit-limit'))).toBe(limit);
  const remaining = Number(a.headers.get('x-ratelimit-remaining'));
  expect(Number.isInteger(remaining) && remaining >= 0 && remaining < limit).toBe(true);
  const reset = Number(a.headers.get('x-ratelimit-reset'));
  expect(Number.isInteger(reset)).toBe(true);
  expect(reset).toBeGreaterThan(Date.parse('2020-01-01') / 1000); // Unix seconds, not milliseconds
  expect(reset).toBeLessThan(Date.parse('2100-01-01') / 1000);
}

function expectNone(a: Answer): void {
  for (const n of NAMES) expect({ n, present: a.headers.has(n) }).toEqual({ n, present: false });
}

describe('no-store answers carry the headers', () => {
  test('/v1/ip/current, anonymous', async () => {
    const a = await call(server.url, '/v1/ip/current');
    expect(a.headers.get('cache-control')).toBe('no-store');
    expectHeaders(a, 'anonymous', 60);
  });

  test('GET / and auto-mode assessment, with a free key', async () => {
    expectHeaders(await call(server.url, '/', { headers: { 'x-api-key': free } }), 'free', 200);
    expectHeaders(await call(server.url, '/v1/assessment', { headers: { 'x-api-key': free } }), 'free', 200);
  });

  test('an accepted Pro include', async () => {
    const a = await call(server.url, '/v1/ip/1.1.1.1?include=rdap_contacts', { headers: { 'x-api-key': pro } });
    expect(a.status).toBe(200);
    expectHeaders(a, 'pro', 600);
  });

  test('errors (no-store) on counted routes', async () => {
    expectHeaders(await call(server.url, '/v1/ip/not-an-ip'), 'anonymous', 60);
    expectHeaders(await call(server.url, '/v1/ip/8.8.8.8?include=rdap_contacts'), 'anonymous', 60);
    // A past moment's refusal: the lookup route adds its own headers to answers, not to what it throws.
    const past = await call(server.url, '/v1/ip/8.8.8.8?at=1999-01-01T00:00:00Z');
    expect(past.status).toBeGreaterThanOrEqual(400);
    expectHeaders(past, 'anonymous', 60);
  });
});

describe('public answers omit them', () => {
  for (const path of ['/v1/ip/8.8.8.8', '/8.8.8.8', '/8.8.8.8?format=text', '/v1/assessment?ipv4=8.8.8.8&ipv6=2001:4860::8844', '/v1/asn/AS15169']) {
    test(path, async () => {
      const a = await call(server.url, path, { headers: { 'x-api-key': free } });
      expect(a.status).toBe(200);
      expect(a.headers.get('cache-control')).toStartWith('public');
      expectNone(a);
    });
  }
});
