/**
 * The caller IP (issue 3 rule 3): the socket address, or the client named by
 * the ONE header of IPINTEL_TRUST_PROXY_HEADER (X-Forwarded-For by default,
 * or Forwarded) only when the peer is in IPINTEL_TRUST_PROXY; NO_CLIENT_IP
 * when none can be determined. Checked through /v1/ip/current.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { RunningServer } from '../../src/host/start-server.ts';
import { MAX_FORWARDED_HOPS, MAX_HOP_CHARS, TrustedProxies } from '../../src/http/client-ip.ts';
import { parseIPv4 } from '../../src/net/ip.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { call, expectError, NO_LIMITS } from './support.ts';

let trusting: RunningServer;
let trustingForwarded: RunningServer;
let otherProxy: RunningServer;
let plain: RunningServer;
beforeAll(async () => {
  trusting = await startTestServer({ ...NO_LIMITS, IPINTEL_TRUST_PROXY: 'loopback' });
  trustingForwarded = await startTestServer({ ...NO_LIMITS, IPINTEL_TRUST_PROXY: 'loopback', IPINTEL_TRUST_PROXY_HEADER: 'forwarded' });
  otherProxy = await startTestServer({ ...NO_LIMITS, IPINTEL_TRUST_PROXY: '10.0.0.0/8,192.168.0.0/16' });
  plain = await startTestServer(NO_LIMITS);
}, 120_000);
afterAll(async () => {
  await trusting.stop();
  await trustingForwarded.stop();
  await otherProxy.stop();
  await plain.stop();
});

async function callerIp(server: RunningServer, headers: Record<string, string>): Promise<string> {
  const a = await call(server.url, '/v1/ip/current?fields=ip', { headers });
  expect(a.status).toBe(200);
  return a.json().ip;
}

describe('a trusted peer (loopback), X-Forwarded-For (the default header)', () => {
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
    // Finding 1 of issue 17: a proxy that appends to X-Forwarded-For but passes Forwarded through
    // (nginx's usual setup) must not let the client name itself in Forwarded.
    [{ forwarded: 'for=198.51.100.1', 'x-forwarded-for': '198.51.100.1, 203.0.113.5' }, '203.0.113.5'],
    [{ forwarded: 'for=198.51.100.17' }, '127.0.0.1'], // the other header is ignored: the peer itself
    // Plain IPv4 hops take the parse-once path (client-ip.ts): trusted ones are walked past, the leftmost kept.
    [{ 'x-forwarded-for': '127.0.0.9, 127.0.0.1' }, '127.0.0.9'],
    [{ 'x-forwarded-for': '8.8.8.8,127.0.0.1' }, '8.8.8.8'],
    [{ 'x-forwarded-for': '"8.8.8.8"' }, '8.8.8.8'],
  ];
  for (const [headers, ip] of cases) {
    test(`${JSON.stringify(headers)} -> ${ip}`, async () => {
      expect(await callerIp(trusting, headers)).toBe(ip);
    });
  }

  test('only the rightmost hops are walked: a long header of client-written entries is never read whole', async () => {
    const padding = Array.from({ length: 1_000 }, (_, i) => `10.${i >> 8}.${i & 255}.1`).join(', ');
    expect(await callerIp(trusting, { 'x-forwarded-for': `${padding}, 203.0.113.5` })).toBe('203.0.113.5');
  });

  test('more trusted hops than the walk bound: no caller IP rather than a guess', async () => {
    const hops = (n: number) => ['203.0.113.5', ...Array.from({ length: n }, () => '127.0.0.1')].join(', ');
    expect(await callerIp(trusting, { 'x-forwarded-for': hops(MAX_FORWARDED_HOPS - 1) })).toBe('203.0.113.5');
    expectError(await call(trusting.url, '/v1/ip/current', { headers: { 'x-forwarded-for': hops(MAX_FORWARDED_HOPS) } }), 400, 'NO_CLIENT_IP');
  });

  test('a hop longer than the element bound is garbage', async () => {
    expectError(await call(trusting.url, '/v1/ip/current', { headers: { 'x-forwarded-for': '8'.repeat(MAX_HOP_CHARS + 1) } }), 400, 'NO_CLIENT_IP');
  });

  test('the caller IP decides /v1/assessment auto mode and legacy GET /', async () => {
    const a = (await call(trusting.url, '/v1/assessment', { headers: { 'x-forwarded-for': '2001:4860:4860::8888' } })).json();
    expect(a.mode).toBe('auto');
    expect(a.ipv4).toBeNull();
    expect(a.ipv6.ip).toBe('2001:4860:4860::8888');
    expect((await call(trusting.url, '/?format=text', { headers: { 'x-forwarded-for': '8.8.8.8' } })).text).toBe('8.8.8.8\n');
  });
});

describe('a trusted peer (loopback), IPINTEL_TRUST_PROXY_HEADER=forwarded', () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{}, '127.0.0.1'],
    [{ forwarded: 'for=192.0.2.60;proto=http;by=203.0.113.43' }, '192.0.2.60'],
    [{ forwarded: 'For="[2001:db8:cafe::17]:4711"' }, '2001:db8:cafe::17'],
    [{ forwarded: 'for=198.51.100.17, for=127.0.0.1' }, '198.51.100.17'],
    [{ forwarded: 'for=1.1.1.1, for=198.51.100.17' }, '198.51.100.17'],
    [{ forwarded: 'for=198.51.100.17', 'x-forwarded-for': '8.8.8.8' }, '198.51.100.17'], // X-Forwarded-For ignored
    [{ 'x-forwarded-for': '8.8.8.8' }, '127.0.0.1'],
  ];
  for (const [headers, ip] of cases) {
    test(`${JSON.stringify(headers)} -> ${ip}`, async () => {
      expect(await callerIp(trustingForwarded, headers)).toBe(ip);
    });
  }
});

describe('NO_CLIENT_IP when the forwarded client cannot be determined', () => {
  const unusable: Array<[() => RunningServer, Record<string, string>]> = [
    [() => trusting, { 'x-forwarded-for': 'garbage' }],
    [() => trusting, { 'x-forwarded-for': '8.8.8.8, nonsense' }],
    [() => trusting, { 'x-forwarded-for': '08.8.8.8' }], // a leading zero (octal to some parsers) is no address
    [() => trusting, { 'x-forwarded-for': '8.8.8.256' }],
    [() => trustingForwarded, { forwarded: 'for=unknown' }],
    [() => trustingForwarded, { forwarded: 'for=_hidden' }],
    [() => trustingForwarded, { forwarded: 'for=8.8.8.8, proto=https' }], // the nearest hop names no client
  ];
  for (const [server, headers] of unusable) {
    test(JSON.stringify(headers), async () => {
      for (const path of ['/v1/ip/current', '/v1/assessment', '/']) {
        expectError(await call(server().url, path, { headers }), 400, 'NO_CLIENT_IP');
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

describe('TrustedProxies.trustsIPv4', () => {
  test('agrees with trusts() on the edges of every range', () => {
    const trusted = new TrustedProxies(['loopback', '10.0.0.0/8', '192.168.1.0/24', '2001:db8::/32', '203.0.113.7']);
    const texts = ['127.0.0.0', '127.255.255.255', '126.255.255.255', '128.0.0.0', '9.255.255.255', '10.0.0.0', '10.255.255.255', '11.0.0.0', '192.168.0.255', '192.168.1.0', '192.168.1.255', '192.168.2.0', '203.0.113.6', '203.0.113.7', '203.0.113.8', '0.0.0.0', '255.255.255.255'];
    for (const t of texts) expect({ t, trusted: trusted.trustsIPv4(parseIPv4(t)) }).toEqual({ t, trusted: trusted.trusts(t) });
    expect(new TrustedProxies([]).trustsIPv4(parseIPv4('127.0.0.1'))).toBe(false);
  });
});
