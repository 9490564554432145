/**
 * Routing must not depend on the Host header. Found by the raw-socket fuzz:
 * Elysia by default finds the path by searching for "/" from the 11th
 * character of the URL (it assumes a host of at least 4 characters), so a
 * request to a short host name without a port — `Host: api`, a Kubernetes
 * service on port 80 — was routed by the wrong path (404 for every route).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { RunningServer } from '../../src/server.ts';
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
