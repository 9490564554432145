/**
 * Spec section 7, row by row: one HTTP request that produces each error
 * code, with its status, the error shape, no-store, and the `details` the
 * spec names for INVALID_IP, INVALID_FIELDS, PRO_REQUIRED and RATE_LIMITED.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { call, expectError, NO_LIMITS } from './support.ts';

let open: RunningServer; // no limits, no OAuth
let limited: RunningServer; // default limits
let withAuth: RunningServer; // OAuth configured (never contacted: only unauthenticated calls)
beforeAll(async () => {
  open = await startTestServer({ ...NO_LIMITS, IPINTEL_ADMIN_TOKEN: 'codes-admin', IPINTEL_TRUST_PROXY: 'loopback' });
  limited = await startTestServer({ IPINTEL_UPGRADE_URL: 'https://ipintel.example/pricing' });
  withAuth = await startTestServer({
    ...NO_LIMITS,
    IPINTEL_OAUTH_PROVIDER: 'github',
    IPINTEL_OAUTH_CLIENT_ID: 'client',
    IPINTEL_OAUTH_CLIENT_SECRET: 'secret',
    IPINTEL_OAUTH_REDIRECT_URI: 'http://127.0.0.1/auth/callback',
  });
}, 120_000);
afterAll(async () => {
  await open.stop();
  await limited.stop();
  await withAuth.stop();
});

describe('every code of the table', () => {
  const rows: Array<[string, number, () => Promise<Record<string, any>>]> = [
    ['INVALID_IP', 400, async () => expectError(await call(open.url, '/v1/ip/300.1.1.1'), 400, 'INVALID_IP')],
    ['INVALID_FIELDS', 400, async () => expectError(await call(open.url, '/v1/ip/8.8.8.8?fields=nope'), 400, 'INVALID_FIELDS')],
    ['INVALID_INCLUDE', 400, async () => expectError(await call(open.url, '/v1/ip/8.8.8.8?include=nope'), 400, 'INVALID_INCLUDE')],
    ['INVALID_ASN', 400, async () => expectError(await call(open.url, '/v1/asn/ASX'), 400, 'INVALID_ASN')],
    ['NO_CLIENT_IP', 400, async () => expectError(await call(open.url, '/v1/ip/current', { headers: { 'x-forwarded-for': 'nonsense' } }), 400, 'NO_CLIENT_IP')],
    ['UNAUTHORIZED', 401, async () => expectError(await call(withAuth.url, '/auth/keys'), 401, 'UNAUTHORIZED')],
    ['INVALID_API_KEY', 401, async () => expectError(await call(open.url, '/v1/ip/8.8.8.8', { headers: { 'x-api-key': 'ipk_not_a_key' } }), 401, 'INVALID_API_KEY')],
    ['FORBIDDEN', 403, async () => expectError(await call(open.url, '/reload', { method: 'POST' }), 403, 'FORBIDDEN')],
    ['PRO_REQUIRED', 403, async () => expectError(await call(open.url, '/v1/ip/8.8.8.8?include=rdap_contacts'), 403, 'PRO_REQUIRED')],
    ['NOT_FOUND', 404, async () => expectError(await call(open.url, '/v2/ip/8.8.8.8'), 404, 'NOT_FOUND')],
    ['AUTH_DISABLED', 503, async () => expectError(await call(open.url, '/auth/keys'), 503, 'AUTH_DISABLED')],
  ];
  for (const [code, status, run] of rows) {
    test(`${code} (${status})`, async () => {
      expect(typeof (await run())).toBe('object');
    });
  }

  test('errors are never cached', async () => {
    for (const path of ['/v1/ip/300.1.1.1', '/v1/asn/ASX', '/v2/x', '/8.8.8.8?format=xml']) {
      expect((await call(open.url, path)).headers.get('cache-control')).toBe('no-store');
    }
  });
});

describe('details the spec names', () => {
  test('INVALID_IP: details.provided holds the given text', async () => {
    expect((expectError(await call(open.url, '/v1/ip/1.2.3.999'), 400, 'INVALID_IP')).provided).toBe('1.2.3.999');
  });

  test('INVALID_FIELDS: allowed_fields and invalid_fields', async () => {
    const d = expectError(await call(open.url, '/v1/ip/8.8.8.8?fields=ip,what'), 400, 'INVALID_FIELDS');
    expect(d.allowed_fields).toContain('ip');
    expect(d.invalid_fields).toEqual(['what']);
  });

  test('PRO_REQUIRED: include and allowed_includes', async () => {
    const d = expectError(await call(open.url, '/v1/ip/8.8.8.8?include=rdap_contacts'), 403, 'PRO_REQUIRED');
    expect(d.include).toEqual(['rdap_contacts']);
    expect(Array.isArray(d.allowed_includes)).toBe(true);
  });

  test('RATE_LIMITED: limit, remaining, reset_at (ISO 8601 UTC), upgrade_url, and the four headers with remaining 0', async () => {
    let a = await call(limited.url, '/v1/ip/current');
    for (let i = 0; i < 70 && a.status !== 429; i++) a = await call(limited.url, '/v1/ip/current');
    const d = expectError(a, 429, 'RATE_LIMITED');
    expect(d.limit).toBe(60);
    expect(d.remaining).toBe(0);
    expect(d.reset_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(d.upgrade_url).toBe('https://ipintel.example/pricing');
    expect(a.headers.get('x-ratelimit-limit')).toBe('60');
    expect(a.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(a.headers.get('x-ratelimit-tier')).toBe('anonymous');
    expect(Number(a.headers.get('x-ratelimit-reset'))).toBe(Math.ceil(Date.parse(d.reset_at) / 1000));
  });
});
