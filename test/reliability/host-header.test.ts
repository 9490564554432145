/**
 * Routing must not depend on the Host header. Found by the raw-socket fuzz:
 * Elysia by default finds the path by searching for "/" from the 11th
 * character of the URL (it assumes a host of at least 4 characters), so a
 * request to a short host name without a port — `Host: api`, a Kubernetes
 * service on port 80 — was routed by the wrong path (404 for every route).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { bodyOf, rawRequest, statusOf } from './raw-http.ts';

let server: RunningServer;
beforeAll(async () => {
  server = await startTestServer({ IPINTEL_RATE_LIMITS: 'off' });
}, 120_000);
afterAll(() => server.stop());

const get = async (host: string, path: string) => {
  const res = await rawRequest(server.port, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  return { status: statusOf(res), body: bodyOf(res) };
};

describe('any Host header routes by the request path', () => {
  for (const host of ['a', 'ip', 'api', 'a.b', 'app', 'localhost', '127.0.0.1', 'api:8080', '[::1]']) {
    test(`Host: ${host}`, async () => {
      const v1 = await get(host, '/v1/ip/8.8.8.8?fields=ip');
      expect(v1).toEqual({ status: 200, body: '{"ip":"8.8.8.8"}' });
      const text = await get(host, '/1.1.1.1?format=text');
      expect(text.status).toBe(200);
      expect(text.body).toMatch(/^1\.1\.1\.1\t[^\n]*\n$/);
      expect((await get(host, '/v1/asn/AS15169')).status).toBe(200);
      expect((await get(host, '/v1/nope')).status).toBe(404);
    });
  }
});

/**
 * Issue 17: a Host Bun cannot parse (`a/`, `x?`, `x#`, `x\`) makes request.url
 * the bare target, which the limiter and the router read differently
 * (`/auth/x/v1/ip/current`: exempt for one, a lookup for the other); a Host
 * with a malformed port or address makes it a URL no parser accepts (500s).
 * One view of the request: such a request is 400 BAD_REQUEST, before anything runs.
 */
describe('a Host that cannot be parsed is 400 BAD_REQUEST, never another route', () => {
  let limited: RunningServer;
  beforeAll(async () => {
    limited = await startTestServer({ IPINTEL_ADMIN_TOKEN: 'host-admin' });
  }, 120_000);
  afterAll(() => limited?.stop());

  const send = async (host: string, target: string) => {
    const res = await rawRequest(limited.port, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    const body = bodyOf(res);
    let code: unknown = null;
    try {
      code = (JSON.parse(body) as { code?: unknown }).code;
    } catch {}
    return { status: statusOf(res), code, body };
  };

  const BAD_HOSTS = ['a/', 'x?', 'x#', 'x\\', 'a b', 'a:99999', 'a:abc', '256.1.1.1', '[zz]', 'a%zz'];
  const TARGETS = ['/auth/x/v1/ip/current', '/v1/data/status', '/v1/data/status?x=1', '/v1/ip/1.1.1.1?fields=ip', '/v1/ip/1.1.1.1', '/1.1.1.1?format=text'];

  test('every malformed Host with every target: 400 BAD_REQUEST in the spec shape', async () => {
    for (const host of BAD_HOSTS) {
      for (const target of TARGETS) {
        const a = await send(host, target);
        expect({ host, target, status: a.status, code: a.code }).toEqual({ host, target, status: 400, code: 'BAD_REQUEST' });
        expect(Object.keys(JSON.parse(a.body)).sort()).toEqual(['code', 'details', 'error']);
      }
    }
  });

  test('a drained bucket stays drained: a malformed Host is not a way around the limit', async () => {
    // Drain the loopback caller's bucket with well-formed lookups (60 a minute: on a loaded machine a slow
    // drain sees refills, so it goes on until ten are refused, within a bound).
    let refused = 0;
    for (let i = 0; i < 300 && refused < 10; i++) if ((await send('127.0.0.1', '/v1/ip/current')).status === 429) refused++;
    expect(refused).toBe(10);
    const drainedAt = Date.now();
    for (const host of ['a/', 'a:99999']) {
      for (const target of ['/auth/x/v1/ip/current', '/v1/ip/1.1.1.1', '/v1/ip/1.1.1.1?fields=ip']) {
        const a = await send(host, target);
        expect({ host, target, status: a.status }).toEqual({ host, target, status: 400 });
      }
    }
    const last = (await send('127.0.0.1', '/v1/ip/current')).status;
    // One request refills a second: only a machine too slow to send six requests in it may see a 200 here.
    if (Date.now() - drainedAt < 1_000) expect(last).toBe(429);
    else expect(last === 200 || last === 429).toBe(true);
  }, 30_000);
});
