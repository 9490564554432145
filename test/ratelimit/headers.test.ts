import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import {
  applyRateLimitHeaders,
  isSharedCacheable,
  rateLimitedError,
  rateLimitHeaders,
  shouldSendRateLimitHeaders,
  upgradeUrlFor,
  type RateDecision,
} from '../../src/http/ratelimit/index.ts';
import { errorResponse } from '../../src/http/error-response.ts';
import { isExemptFromRateLimit } from '../../src/http/routes/table.ts';

const decision: RateDecision = { allowed: true, limit: 200, remaining: 17, resetAt: 1_780_000_123, retryAfter: 0, tier: 'free' };

test('the four headers, spelled as the spec spells them', () => {
  expect(rateLimitHeaders(decision)).toEqual({
    'X-RateLimit-Limit': '200',
    'X-RateLimit-Remaining': '17',
    'X-RateLimit-Reset': '1780000123',
    'X-RateLimit-Tier': 'free',
  });
});

test('presence per Cache-Control of each class in spec 4.9', () => {
  const cases: Array<[string, number, string | null, boolean]> = [
    ['explicit lookup', 200, 'public, max-age=86400', false],
    ['explicit lookup revalidated', 304, 'public, max-age=86400', false],
    ['auto-detect', 200, 'no-store', true],
    ['legacy GET /', 200, 'no-store, no-cache, must-revalidate', true],
    ['accepted include=rdap_contacts', 200, 'no-store', true],
    ['crawler verify', 200, 'no-store', true],
    ['every 429', 429, 'no-store', true],
    ['429 even if marked public', 429, 'public, max-age=60', true],
    ['error on a public route', 400, 'public, max-age=86400', true],
    ['server error', 500, null, true],
    ['no Cache-Control', 200, null, true],
    ['private', 200, 'private, max-age=60', true],
    ['s-maxage is shared', 200, 's-maxage=60', false],
    ['public overridden by no-store', 200, 'public, no-store', true],
    ['case and spacing', 200, '  Public ,MAX-AGE=5', false],
  ];
  for (const [name, status, cc, expected] of cases) {
    expect({ name, send: shouldSendRateLimitHeaders(status, cc) }).toEqual({ name, send: expected });
  }
  expect(isSharedCacheable('max-age=60')).toBe(false);
});

test('applyRateLimitHeaders reads the response Cache-Control', () => {
  const pub = new Headers({ 'cache-control': 'public, max-age=86400' });
  applyRateLimitHeaders(pub, decision, 200);
  expect(pub.has('x-ratelimit-limit')).toBe(false);
  const noStore = new Headers({ 'cache-control': 'no-store' });
  applyRateLimitHeaders(noStore, decision, 200);
  expect(noStore.get('x-ratelimit-remaining')).toBe('17');
});

test('rateLimitedError: 429 RATE_LIMITED, details, Remaining 0 and Retry-After', async () => {
  const refused: RateDecision = { allowed: false, limit: 60, remaining: 0, resetAt: 1_780_000_060, retryAfter: 3, tier: 'anonymous' };
  const err = rateLimitedError(refused, 'https://api.example.test/pricing');
  expect(err.status).toBe(429);
  expect(err.code).toBe('RATE_LIMITED');
  expect(err.details).toEqual({ limit: 60, remaining: 0, reset_at: '2026-05-28T20:27:40.000Z', upgrade_url: 'https://api.example.test/pricing' });
  expect(new Date('2026-05-28T20:27:40.000Z').getTime() / 1000).toBe(1_780_000_060);
  const res = errorResponse(err);
  expect(res.status).toBe(429);
  expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
  expect(res.headers.get('x-ratelimit-limit')).toBe('60');
  expect(res.headers.get('x-ratelimit-reset')).toBe('1780000060');
  expect(res.headers.get('x-ratelimit-tier')).toBe('anonymous');
  expect(res.headers.get('retry-after')).toBe('3');
  expect(((await res.json()) as { code: string }).code).toBe('RATE_LIMITED');
});

test('upgrade URL: configured value, else the relative /pricing (the request\'s Host is the client\'s choice)', () => {
  expect(upgradeUrlFor(null)).toBe('/pricing');
  expect(upgradeUrlFor('')).toBe('/pricing');
  expect(upgradeUrlFor('https://example.test/plans')).toBe('https://example.test/plans');
});

test('exempt routes: preflight, operator, docs, browser files; everything else counts (account routes included)', () => {
  for (const [method, path] of [
    ['OPTIONS', '/v1/ip/current'],
    ['GET', '/health'],
    ['GET', '/metrics'],
    ['POST', '/reload'],
    ['GET', '/docs'],
    ['GET', '/docs/json'],
    ['GET', '/openapi.json'],
    ['GET', '/favicon.ico'],
    ['GET', '/robots.txt'],
  ]) {
    expect({ method, path, exempt: isExemptFromRateLimit(method, path) }).toEqual({ method, path, exempt: true });
  }
  for (const [method, path] of [
    ['GET', '/v1/ip/current'],
    ['GET', '/v1/ip/8.8.8.8'],
    ['GET', '/'],
    ['GET', '/8.8.8.8'],
    ['GET', '/v1/assessment'],
    ['POST', '/v1/crawler/verify'],
    ['GET', '/v1/asn/AS13335'],
    ['GET', '/asn/AS13335'],
    ['GET', '/v1/data/status'],
    ['GET', '/docsx'],
    ['GET', '/authx'],
    ['GET', '/no/such/route'],
    ['GET', '/auth/idp'],
    ['GET', '/auth/callback'],
    ['GET', '/auth/usage'],
    ['GET', '/auth/keys'],
    ['GET', '/dashboard'],
  ]) {
    expect({ method, path, exempt: isExemptFromRateLimit(method, path) }).toEqual({ method, path, exempt: false });
  }
});

test('the verdict on one Cache-Control value never leaks into the next', () => {
  const values: Array<[string | null, boolean]> = [
    ['public, max-age=86400', true], ['no-store', false], ['public, max-age=86400', true], ['public, no-store', false],
    ['PUBLIC', true], [null, false], ['private, s-maxage=5', false], ['s-maxage=5', true], ['s-maxage=5', true], ['max-age=60', false],
  ];
  for (let round = 0; round < 3; round++) for (const [value, shared] of values) expect(isSharedCacheable(value)).toBe(shared);
});
