/**
 * Issue 17: a wrong method on an existing route is 405 with `Allow` (it was
 * 404, and `GET /reload` was answered as a lookup of "reload"); the files
 * every browser and crawler asks for are 404, not INVALID_IP; any other
 * single segment is still a legacy lookup.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { call, expectError } from './support.ts';
import { UNREACHABLE_OIDC_ENV } from '../helpers/oauth-env.ts';

let server: RunningServer;
beforeAll(async () => {
  server = await startTestServer({
    IPINTEL_RATE_LIMITS: 'off',
    ...UNREACHABLE_OIDC_ENV,
  });
}, 120_000);
afterAll(() => server.stop());

test('a method the route does not answer: 405 METHOD_NOT_ALLOWED with Allow', async () => {
  for (const [method, path, allow] of [
    ['GET', '/reload', 'POST, OPTIONS'],
    ['POST', '/v1/ip/1.1.1.1', 'GET, HEAD, OPTIONS'],
    ['DELETE', '/v1/ip/current', 'GET, HEAD, OPTIONS'],
    ['PUT', '/health', 'GET, HEAD, OPTIONS'],
    ['GET', '/v1/crawler/verify', 'POST, OPTIONS'],
    ['POST', '/1.1.1.1', 'GET, HEAD, OPTIONS'],
    ['PATCH', '/', 'GET, HEAD, OPTIONS'],
    ['DELETE', '/auth/keys', 'GET, POST, HEAD, OPTIONS'],
    ['GET', '/auth/keys/some-id', 'DELETE, OPTIONS'],
    ['POST', '/auth/idp', 'GET, HEAD, OPTIONS'],
  ]) {
    const a = await call(server.url, path, { method });
    const details = expectError(a, 405, 'METHOD_NOT_ALLOWED');
    expect({ method, path, allow: a.headers.get('allow') }).toEqual({ method, path, allow });
    expect(details.allowed_methods).toEqual(allow.split(', '));
    expect(a.headers.get('cache-control')).toBe('no-store');
  }
});

test('the methods a route answers still reach it (HEAD with GET, preflights everywhere)', async () => {
  expect((await call(server.url, '/health', { method: 'HEAD' })).status).toBe(200);
  expect((await call(server.url, '/v1/ip/1.1.1.1', { method: 'HEAD' })).status).toBe(200);
  const preflight = await call(server.url, '/reload', { method: 'OPTIONS', headers: { origin: 'https://a.example', 'access-control-request-method': 'POST' } });
  expect(preflight.status).toBe(204);
  // A preflight is answered on any path, as the CORS plugin always did.
  expect((await call(server.url, '/no/such/route/at/all', { method: 'OPTIONS', headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' } })).status).toBe(204);
  expectError(await call(server.url, '/reload', { method: 'POST' }), 403, 'FORBIDDEN');
});

test('/favicon.ico, /robots.txt and paths deeper than any route: 404 NOT_FOUND', async () => {
  for (const path of ['/favicon.ico', '/robots.txt', '/a/b/c/d/e', '/v1/ip/1.1.1.1/extra', '/auth/nope']) {
    const a = await call(server.url, path, { headers: { accept: 'text/plain' } });
    expect({ path, status: a.status }).toEqual({ path, status: 404 });
    expectError(a, 404, 'NOT_FOUND');
  }
});

test('any other single segment is still the legacy lookup: a malformed address is 400 INVALID_IP', async () => {
  for (const path of ['/favicon', '/robots', '/index.html', '/v1']) {
    expect(expectError(await call(server.url, path), 400, 'INVALID_IP').provided).toBe(path.slice(1));
  }
  expect((await call(server.url, '/1.1.1.1')).status).toBe(200);
});
