/**
 * GET /v1/ip/{ip} without a query is answered before the framework
 * (lookupFastPath). It must answer exactly as the Elysia route does: same
 * status, headers and bytes; and everything it does not handle must be left
 * to the app.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createCrawlerVerifier, type CrawlerProof, type CrawlerVerifier } from '../../src/crawlers/verifier.ts';
import { createApp } from '../../src/http/app.ts';
import { lookupFastPath } from '../../src/http/routes/lookup.ts';
import type { RunningServer } from '../../src/server.ts';
import { prng } from '../helpers/prng.ts';
import { startTestServer } from '../helpers/test-server.ts';

let server: RunningServer;
let app: ReturnType<typeof createApp>;
let fast: ReturnType<typeof lookupFastPath>;
beforeAll(async () => {
  server = await startTestServer({ IPINTEL_RATE_LIMITS: 'off' });
  app = createApp(server.services);
  fast = lookupFastPath(server.services);
}, 120_000);
afterAll(() => server.stop());

const headersOf = (r: Response) => [...r.headers].filter(([k]) => k !== 'date').sort();
const request = (path: string, init?: RequestInit) => new Request(`http://127.0.0.1${path}`, init);
const pathOf = (url: string) => new URL(url).pathname;

test('answers exactly as the Elysia route: status, headers and body', async () => {
  const rnd = prng(5);
  const byte = () => Math.floor(rnd() * 256);
  const hex = () => Math.floor(rnd() * 65536).toString(16);
  const ips = ['8.8.8.8', '10.0.0.1', '127.0.0.1', '0.0.0.0', '255.255.255.255', '185.220.101.1', '::1', '::', '::ffff:5.101.96.10', '2001:db8::1', '2001:4860:4801:10::1', 'fe80::1', '2a03:b0c0:0:108::1', 'FE80::ABCD'];
  for (let i = 0; i < 1500; i++) ips.push(`${byte()}.${byte()}.${byte()}.${byte()}`);
  for (let i = 0; i < 300; i++) ips.push(`2${Math.floor(rnd() * 4)}${hex().padStart(2, '0').slice(0, 2)}:${hex()}::${hex()}`);
  let answered = 0;
  for (const ip of ips) {
    const path = `/v1/ip/${ip}`;
    const req = request(path);
    const mine = fast(req, req.url, path);
    if (mine === null) {
      // Only an address whose crawler range wants a DNS proof is left to the route (it awaits the proof).
      expect(server.services.crawlers.wantsProof(server.services.index.current.lookup(ip))).toBe(true);
      continue;
    }
    answered++;
    const theirs = await app.handle(request(path));
    expect(mine!.status).toBe(theirs.status);
    expect(headersOf(mine!)).toEqual(headersOf(theirs));
    expect(await mine!.text()).toBe(await theirs.text());
  }
  expect(answered).toBeGreaterThan(ips.length - 10);
});

test('leaves to the app what it does not handle: queries, encoded or odd paths, other methods, errors', async () => {
  const cases: Array<[string, RequestInit?]> = [
    ['/v1/ip/8.8.8.8?fields=ip'],
    ['/v1/ip/8.8.8.8?'],
    ['/v1/ip/8%2E8.8.8'],
    ['/v1/ip/fe80::1%25eth0'],
    ['/v1/ip/current'],
    ['/v1/ip/'],
    ['/v1/ip/8.8.8.8/'],
    ['/v1/ip/not-an-ip'],
    ['/v1/ip/1.2.3.4.5'],
    ['/v1/ip/8.8.8.8', { method: 'HEAD' }],
    ['/v1/ip/8.8.8.8', { method: 'POST' }],
    ['/v1/ip/8.8.8.8', { method: 'OPTIONS' }],
    ['/v1/asn/AS15169'],
    ['/v1/ip/2001:4860:4801:10::1'], // a Googlebot range: the route awaits the DNS proof
  ];
  for (const [path, init] of cases) {
    const req = request(path, init);
    expect(fast(req, req.url, pathOf(req.url))).toBeNull();
  }
});

test('over HTTP the fast path and the app give the same answer as before for the same address', async () => {
  const viaFast = await fetch(`${server.url}/v1/ip/1.1.1.1`);
  const viaApp = await fetch(`${server.url}/v1/ip/1.1.1.1?fields=${encodeURIComponent('ip,stack,location,network,routing,score,classification,evidence,decision,scores,scenarios,explanation')}`);
  expect(viaFast.status).toBe(200);
  expect(await viaFast.text()).toBe(await viaApp.text());
  expect(viaFast.headers.get('access-control-allow-origin')).toBe('*');
  expect(viaFast.headers.get('cache-control')).toBe('public, max-age=86400');
});

test('a DNS proof already cached for an address (e.g. from POST /v1/crawler/verify) shows in the fast answer as in the route', async () => {
  const real = createCrawlerVerifier({ dnsServers: ['127.0.0.1:9'] });
  const proof: CrawlerProof = { key: 'googlebot', hostname: 'crawl-8-8-4-4.googlebot.com', verifiedBy: 'reverse_forward_dns' };
  const proven: CrawlerVerifier = { ...real, proofFor: (ip) => (ip === '8.8.4.4' ? proof : null), startProof: async (ip) => (ip === '8.8.4.4' ? proof : null) };
  const other = await startTestServer({ IPINTEL_RATE_LIMITS: 'off' }, { crawlers: proven });
  try {
    const req = request('/v1/ip/8.8.4.4');
    const mine = lookupFastPath(other.services)(req, req.url, '/v1/ip/8.8.4.4');
    expect(mine).not.toBeNull();
    const body = await mine!.text();
    expect(JSON.parse(body).classification.is_verified_crawler).toBe(true);
    expect(body).toBe(await (await createApp(other.services).handle(request('/v1/ip/8.8.4.4'))).text());
  } finally {
    other.stop();
  }
});

test('headers added to one fast answer (rate-limit headers) never reach the next', () => {
  const first = fast(request('/v1/ip/1.1.1.1'), 'http://127.0.0.1/v1/ip/1.1.1.1', '/v1/ip/1.1.1.1')!;
  first.headers.set('x-ratelimit-limit', '10');
  first.headers.set('cache-control', 'no-store');
  const second = fast(request('/v1/ip/1.1.1.2'), 'http://127.0.0.1/v1/ip/1.1.1.2', '/v1/ip/1.1.1.2')!;
  expect(second.headers.get('x-ratelimit-limit')).toBeNull();
  expect(second.headers.get('cache-control')).toBe('public, max-age=86400');
});

test('a record the fast lane already answered is answered again without reading its row; a record wanting a DNS proof never is', async () => {
  const lane = lookupFastPath(server.services);
  const reader = server.services.index.current as unknown as { record(id: number): unknown };
  const original = reader.record;
  let rowReads = 0;
  reader.record = (id: number) => {
    rowReads++;
    return original.call(reader, id);
  };
  try {
    const ask = (path: string) => lane(request(path), `http://127.0.0.1${path}`, path);
    const first = await ask('/v1/ip/1.1.1.1')!.text();
    expect(rowReads).toBeGreaterThan(0);
    rowReads = 0;
    expect(await ask('/v1/ip/1.1.1.1')!.text()).toBe(first);
    expect(rowReads).toBe(0);
    // The Googlebot range: declined (the route awaits the proof) every time, memo or not.
    for (let i = 0; i < 3; i++) expect(ask('/v1/ip/2001:4860:4801:10::1')).toBeNull();
  } finally {
    reader.record = original;
  }
});
