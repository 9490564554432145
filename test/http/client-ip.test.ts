/**
 * The caller IP (issue 3 rule 3): the socket address, or the client named by
 * X-Forwarded-For / Forwarded only when the peer is in IPINTEL_TRUST_PROXY;
 * NO_CLIENT_IP when none can be determined. Checked through /v1/ip/current.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { RunningServer } from '../../src/server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { call, expectError, NO_LIMITS } from './support.ts';

let trusting: RunningServer;
let otherProxy: RunningServer;
let plain: RunningServer;
beforeAll(async () => {
  trusting = await startTestServer({ ...NO_LIMITS, IPINTEL_TRUST_PROXY: 'loopback' });
  otherProxy = await startTestServer({ ...NO_LIMITS, IPINTEL_TRUST_PROXY: '10.0.0.0/8,192.168.0.0/16' });
  plain = await startTestServer(NO_LIMITS);
}, 120_000);
afterAll(async () => {
  await trusting.stop();
  await otherProxy.stop();
  await plain.stop();
});

async function callerIp(server: RunningServer, headers: Record<string, string>): Promise<string> {
  const a = await call(server.url, '/v1/ip/current?fields=ip', { headers });
  expect(a.status).toBe(200);
  return a.json().ip;
}

describe('a trusted peer (loopback)', () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{}, '127.0.0.1'],
    [{ 'x-forwarded-for': '8.8.8.8' }, '8.8.8.8'],
    [{ 'x-forwarded-for': '8.8.8.8, 127.0.0.1' }, '8.8.8.8'], // trusted hops are skipped from the right
    [{ 'x-forwarded-for': '1.1.1.1, 8.8.8.8' }, '8.8.8.8'], // the leftmost entry is the client's own claim: not believed
    [{ 'x-forwarded-for': ' 8.8.8.8 ' }, '8.8.8.8'],
    [{ 'x-forwarded-for': '8.8.8.8:51234' }, '8.8.8.8'],
    [{ 'x-forwarded-for': '::ffff:8.8.8.8' }, '8.8.8.8'],
    [{ 'x-forwarded-for': '2001:4860:4860::8888' }, '2001:4860:4860::8888'],
    [{ 'x-forwarded-for': '[2001:4860:4860::8888]:443' }, '2001:4860:4860::8888'],
    [{ forwarded: 'for=192.0.2.60;proto=http;by=203.0.113.43' }, '192.0.2.60'],
    [{ forwarded: 'For="[2001:db8:cafe::17]:4711"' }, '2001:db8:cafe::17'],
    [{ forwarded: 'for=198.51.100.17, for=127.0.0.1' }, '198.51.100.17'],
    [{ forwarded: 'for=198.51.100.17', 'x-forwarded-for': '8.8.8.8' }, '198.51.100.17'], // the standard header wins
  ];
  for (const [headers, ip] of cases) {
    test(`${JSON.stringify(headers)} -> ${ip}`, async () => {
      expect(await callerIp(trusting, headers)).toBe(ip);
    });
  }

  test('the caller IP decides /v1/assessment auto mode and legacy GET /', async () => {
    const a = (await call(trusting.url, '/v1/assessment', { headers: { 'x-forwarded-for': '2001:4860:4860::8888' } })).json();
    expect(a.mode).toBe('auto');
    expect(a.ipv4).toBeNull();
    expect(a.ipv6.ip).toBe('2001:4860:4860::8888');
    expect((await call(trusting.url, '/?format=text', { headers: { 'x-forwarded-for': '8.8.8.8' } })).text).toBe('8.8.8.8\n');
  });
});

describe('NO_CLIENT_IP when the forwarded client cannot be determined', () => {
  const unusable: Array<Record<string, string>> = [{ 'x-forwarded-for': 'garbage' }, { 'x-forwarded-for': '8.8.8.8, nonsense' }, { forwarded: 'for=unknown' }, { forwarded: 'for=_hidden' }];
  for (const headers of unusable) {
    test(JSON.stringify(headers), async () => {
      for (const path of ['/v1/ip/current', '/v1/assessment', '/']) {
        expectError(await call(trusting.url, path, { headers }), 400, 'NO_CLIENT_IP');
      }
    });
  }

  test('explicit lookups do not need a caller IP', async () => {
    const a = await call(trusting.url, '/v1/ip/8.8.8.8?fields=ip', { headers: { 'x-forwarded-for': 'garbage' } });
    expect(a.status).toBe(200);
  });
});

describe('an untrusted peer: forwarding headers are ignored', () => {
  for (const [name, server] of [
    ['no IPINTEL_TRUST_PROXY', () => plain],
    ['IPINTEL_TRUST_PROXY without loopback', () => otherProxy],
  ] as const) {
    test(name, async () => {
      expect(await callerIp(server(), { 'x-forwarded-for': '8.8.8.8' })).toBe('127.0.0.1');
      expect(await callerIp(server(), { forwarded: 'for=8.8.8.8' })).toBe('127.0.0.1');
      expect(await callerIp(server(), { 'x-forwarded-for': 'garbage' })).toBe('127.0.0.1');
    });
  }
});
