/**
 * Issue 17 findings probed as an attacker, against a real server on loopback
 * with limits on: invalid keys are limited like anonymous calls of their IP,
 * every /v1 answer (errors included) carries CORS headers a browser can read
 * the limit headers through, `upgrade_url` never comes from the Host header,
 * and `details.provided` is bounded. The server trusts loopback as a proxy so
 * each test takes its own caller IP (its own bucket) through X-Forwarded-For.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { call, expectError, type Answer } from './support.ts';

const INVALID_KEY = 'ipi_' + 'A'.repeat(43); // key-shaped, never issued
const ANONYMOUS_LIMIT = 60;

let server: RunningServer;
let configured: RunningServer;
beforeAll(async () => {
  server = await startTestServer({ IPINTEL_TRUST_PROXY: 'loopback' });
  configured = await startTestServer({ IPINTEL_TRUST_PROXY: 'loopback', IPINTEL_UPGRADE_URL: 'https://billing.example.test/plans' });
}, 120_000);
afterAll(async () => {
  await server.stop();
  await configured.stop();
});

/** Calls as the client `ip` (named by the trusted loopback proxy). */
function as(ip: string, path: string, headers: Record<string, string> = {}, base = server.url): Promise<Answer> {
  return call(base, path, { headers: { 'x-forwarded-for': ip, ...headers } });
}

/** The CORS headers a browser needs to read an answer and its limit headers. */
function expectReadableByBrowsers(a: Answer): void {
  expect(a.headers.get('access-control-allow-origin')).toBe('*');
  const exposed = (a.headers.get('access-control-expose-headers') ?? '').split(',').map((h) => h.trim().toLowerCase());
  for (const name of ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-tier']) expect(exposed).toContain(name);
}

function expectAnonymousLimitHeaders(a: Answer, remaining: number): void {
  expect(a.headers.get('x-ratelimit-limit')).toBe(String(ANONYMOUS_LIMIT));
  expect(a.headers.get('x-ratelimit-tier')).toBe('anonymous');
  expect(a.headers.get('x-ratelimit-remaining')).toBe(String(remaining));
  expect(Number(a.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0);
}

describe('invalid API keys are limited per caller IP with the anonymous limit', () => {
  test('100 concurrent requests with an invalid key: exactly 60 x 401 with the anonymous headers, then 429s', async () => {
    const answers = await Promise.all(Array.from({ length: 100 }, () => as('198.51.100.10', '/v1/ip/8.8.8.8', { 'x-api-key': INVALID_KEY })));
    const refused = answers.filter((a) => a.status === 401);
    const limited = answers.filter((a) => a.status === 429);
    expect({ refused: refused.length, limited: limited.length }).toEqual({ refused: ANONYMOUS_LIMIT, limited: 100 - ANONYMOUS_LIMIT });
    for (const a of refused) {
      expectError(a, 401, 'INVALID_API_KEY');
      expect(a.headers.get('x-ratelimit-tier')).toBe('anonymous');
      expect(a.headers.get('x-ratelimit-limit')).toBe(String(ANONYMOUS_LIMIT));
    }
    // Each 401 took one token: the remaining counts are 59..0, each once.
    expect(refused.map((a) => Number(a.headers.get('x-ratelimit-remaining'))).sort((x, y) => x - y)).toEqual(Array.from({ length: ANONYMOUS_LIMIT }, (_, i) => i));
    for (const a of limited) {
      const details = expectError(a, 429, 'RATE_LIMITED');
      expect(details.limit).toBe(ANONYMOUS_LIMIT);
      expectAnonymousLimitHeaders(a, 0);
      expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });

  test('the invalid key drains the anonymous bucket of its IP: an anonymous call from there is limited too', async () => {
    for (let i = 0; i < ANONYMOUS_LIMIT; i++) expect((await as('198.51.100.11', '/v1/ip/8.8.8.8', { 'x-api-key': 'not-a-key' })).status).toBe(401);
    expectError(await as('198.51.100.11', '/v1/ip/8.8.8.8'), 429, 'RATE_LIMITED');
    // Another caller IP is untouched.
    expect((await as('198.51.100.12', '/v1/ip/8.8.8.8')).status).toBe(200);
  });

  test('a valid key from the same IP keeps its own bucket', async () => {
    const { created } = await server.services.accounts.grantKeyByEmail('hostile-same-ip@example.test', 'free', 'test');
    for (let i = 0; i < ANONYMOUS_LIMIT + 1; i++) await as('198.51.100.13', '/v1/ip/8.8.8.8', { 'x-api-key': INVALID_KEY });
    // /v1/ip/current is no-store, so it carries the limit headers (a public answer would not).
    const a = await as('198.51.100.13', '/v1/ip/current?fields=ip', { 'x-api-key': created.secret });
    expect(a.status).toBe(200);
    expect(a.headers.get('x-ratelimit-tier')).toBe('free');
  });
});

describe('CORS headers on every /v1 answer, errors included', () => {
  test('401 INVALID_API_KEY', async () => {
    const a = await as('198.51.100.20', '/v1/ip/8.8.8.8', { 'x-api-key': INVALID_KEY, origin: 'https://app.example.test' });
    expectError(a, 401, 'INVALID_API_KEY');
    expectReadableByBrowsers(a);
  });

  test('429 RATE_LIMITED (with Retry-After a browser can read)', async () => {
    for (let i = 0; i < ANONYMOUS_LIMIT; i++) await as('198.51.100.21', '/v1/ip/8.8.8.8');
    const a = await as('198.51.100.21', '/v1/ip/8.8.8.8', { origin: 'https://app.example.test' });
    expectError(a, 429, 'RATE_LIMITED');
    expectReadableByBrowsers(a);
    expect(a.headers.get('retry-after')).not.toBeNull();
  });

  test('400 and 404', async () => {
    const bad = await as('198.51.100.22', '/v1/ip/not-an-ip');
    expectError(bad, 400, 'INVALID_IP');
    expectReadableByBrowsers(bad);
    const missing = await as('198.51.100.22', '/v1/nothing-here');
    expectError(missing, 404, 'NOT_FOUND');
    expectReadableByBrowsers(missing);
  });
});

describe('upgrade_url never comes from the request', () => {
  test('unset IPINTEL_UPGRADE_URL: the relative /pricing, whatever Host the client sends', async () => {
    let last: Answer | null = null;
    for (let i = 0; i <= ANONYMOUS_LIMIT; i++) last = await as('198.51.100.30', '/v1/ip/8.8.8.8', { host: 'evil.example' });
    expect(expectError(last!, 429, 'RATE_LIMITED').upgrade_url).toBe('/pricing');
  });

  test('IPINTEL_UPGRADE_URL set: that address', async () => {
    let last: Answer | null = null;
    for (let i = 0; i <= ANONYMOUS_LIMIT; i++) last = await as('198.51.100.31', '/v1/ip/8.8.8.8', { host: 'evil.example' }, configured.url);
    expect(expectError(last!, 429, 'RATE_LIMITED').upgrade_url).toBe('https://billing.example.test/plans');
  });
});

describe('details.provided is bounded', () => {
  test('a 5 000-character address is echoed as its first 100 characters and an ellipsis', async () => {
    const long = '1'.repeat(5_000);
    for (const path of [`/v1/ip/${long}`, `/v1/asn/AS${long}x`]) {
      const a = await as('198.51.100.40', path);
      const d = expectError(a, 400, path.startsWith('/v1/ip') ? 'INVALID_IP' : 'INVALID_ASN');
      expect(d.provided).toHaveLength(101);
      expect(d.provided).toBe(path.slice(path.lastIndexOf('/') + 1, path.lastIndexOf('/') + 101) + '…');
      expect(a.text.length).toBeLessThan(1_000);
    }
  });

  test('a short value is echoed unchanged', async () => {
    expect(expectError(await as('198.51.100.41', '/v1/ip/1.2.3.999'), 400, 'INVALID_IP').provided).toBe('1.2.3.999');
  });
});
