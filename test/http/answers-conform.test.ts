/**
 * Real answers of every route conform to /openapi.json (ajv, strict, with
 * formats; additionalProperties false where the spec fixes the object):
 * a spread of IPv4/IPv6 addresses over the full real-snapshot index
 * (bogons, special use, mapped forms, listed ranges, random space), `fields`
 * projections, the Pro RDAP include, legacy JSON and text, the account
 * routes after a sign-in, and errors of each code the server gives.
 */
import { afterAll, beforeAll, beforeEach, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { RunningServer } from '../../src/host/start-server.ts';
import { TestClient } from '../accounts/helpers/client.ts';
import { oidcEnv } from '../accounts/helpers/test-app.ts';
import { startMockIdp, type MockIdp } from '../accounts/helpers/mock-idp.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';
import { fullIndexPath } from '../helpers/full-index.ts';
import { hasSharedFeeds } from '../helpers/shared-feeds.ts';
import { OpenApiResponses, type SeenAnswer } from '../helpers/openapi-responses.ts';
import { prng } from '../helpers/prng.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { startMockRdap, type MockRdapServer } from '../rdap/rdap-feeds.ts';

const ADMIN = 'admin-token-for-tests';
let main: RunningServer;
let limited: RunningServer;
let idp: MockIdp;
let rdap: MockRdapServer;
let checker: OpenApiResponses;
let pro: string;
const problems: string[] = [];
let answers = 0;

/** A free loopback port (the sign-in redirect URI must name the server's port before it starts). */
function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

beforeAll(async () => {
  idp = startMockIdp();
  rdap = startMockRdap();
  const port = freePort();
  main = await startTestServer({
    PORT: String(port),
    // The full real-snapshot index where it exists; a clone checks the shapes on the fixture index.
    IPINTEL_INDEX: hasSharedFeeds ? await fullIndexPath() : await fixtureIndexPath(),
    IPINTEL_RATE_LIMITS: 'off',
    IPINTEL_ADMIN_TOKEN: ADMIN,
    IPINTEL_RDAP_BASE: rdap.base,
    ...oidcEnv(idp.url, idp.clientId, idp.clientSecret),
    IPINTEL_OAUTH_REDIRECT_URI: `http://127.0.0.1:${port}/auth/callback`,
  });
  limited = await startTestServer({});
  pro = (await main.services.accounts.grantKeyByEmail('pro@example.com', 'pro', 'test')).created.secret;
  checker = new OpenApiResponses((await (await fetch(`${main.url}/openapi.json`)).json()) as Record<string, any>);
}, 300_000);
afterAll(async () => {
  await main?.stop();
  await limited?.stop();
  idp?.stop();
  rdap?.stop();
});

/** Sends a request, checks the answer against the document, and returns it. */
async function check(base: string, target: string, init: RequestInit & { client?: TestClient } = {}): Promise<SeenAnswer> {
  const { client, ...rest } = init;
  const res = client ? await client.fetch(base + target, rest) : await fetch(base + target, { ...rest, redirect: 'manual' });
  const seen: SeenAnswer = { method: rest.method ?? 'GET', path: target.split('?')[0]!, status: res.status, headers: res.headers, text: await res.text() };
  problems.push(...checker.problems(seen));
  answers++;
  return seen;
}

const FIXED_ADDRESSES = [
  '8.8.8.8', '1.1.1.1', '9.9.9.9', '5.101.96.10', '185.220.101.1', '185.241.208.232', '23.144.160.67', '104.28.28.1',
  '192.9.135.73', '1.10.16.1', '66.249.66.1', '157.55.39.1', '3.5.140.2', '0.0.0.0', '10.1.2.3', '100.64.0.1',
  '127.0.0.1', '169.254.1.1', '192.0.2.1', '198.18.0.1', '224.0.0.1', '240.0.0.1', '255.255.255.255',
  '2001:4860:4860::8888', '2606:4700:4700::1111', '2a12:2640::1', '::1', '::', 'fe80::1', 'fc00::1', '2001:db8::1',
  'ff02::1', '64:ff9b::808:808', '2002:c000:0201::1', '::ffff:8.8.8.8', '::ffff:10.0.0.1', '::8.8.8.8', '3fff::1',
];

/** Random addresses over the IPv4 space and 2000::/3, reproducible. */
function randomAddresses(): string[] {
  const rnd = prng(19);
  const out: string[] = [];
  for (let i = 0; i < 120; i++) out.push([0, 0, 0, 0].map(() => Math.floor(rnd() * 256)).join('.'));
  for (let i = 0; i < 50; i++) {
    const words = Array.from({ length: 8 }, () => Math.floor(rnd() * 65536));
    words[0] = 0x2000 | (words[0]! & 0x1fff);
    out.push(words.map((w) => w.toString(16)).join(':'));
  }
  return out;
}

beforeEach(() => {
  problems.length = 0;
});

test('answers of every route conform to the document', async () => {
  const m = main.url;
  for (const ip of [...FIXED_ADDRESSES, ...randomAddresses()]) {
    const e = encodeURIComponent(ip);
    await check(m, `/v1/ip/${e}`);
    await check(m, `/${e}`);
  }
  for (const ip of FIXED_ADDRESSES.slice(0, 14)) {
    const e = encodeURIComponent(ip);
    await check(m, `/v1/ip/${e}?fields=ip,location`);
    await check(m, `/v1/ip/${e}?fields=classification&fields=score,evidence`);
    await check(m, `/v1/ip/${e}?fields=network,routing,decision,scores,scenarios,explanation`);
    await check(m, `/${e}?format=text`);
    await check(m, `/${e}?format=text&detail=1`);
    await check(m, `/${e}`, { headers: { accept: 'text/plain' } });
  }
  // Pro RDAP include (a real RDAP answer from the loopback registry), whole and projected.
  await check(m, '/v1/ip/8.8.8.8?include=rdap_contacts', { headers: { 'x-api-key': pro } });
  await check(m, '/v1/ip/1.1.1.1?include=rdap_contacts&fields=ip,rdap', { headers: { 'x-api-key': pro } });
  // Conditional legacy answer.
  const etag = (await check(m, '/8.8.8.8')).headers.get('etag')!;
  expect((await check(m, '/8.8.8.8', { headers: { 'if-none-match': etag } })).status).toBe(304);
  // The caller's own address, the assessment, ASNs, crawler verification, status.
  await check(m, '/v1/ip/current');
  await check(m, '/v1/ip/current?fields=ip');
  await check(m, '/');
  await check(m, '/?format=text');
  await check(m, '/v1/assessment');
  await check(m, '/v1/assessment?ipv4=8.8.8.8&ipv6=2001:4860:4860::8888');
  await check(m, '/v1/assessment?ipv4=185.220.101.1&ipv6=2a12:2640::1');
  await check(m, '/v1/assessment?ipv6=::1');
  for (const asn of ['AS15169', 'AS13335', 'as3356', 'AS4294967295', 'AS64512']) {
    await check(m, `/v1/asn/${asn}`);
    await check(m, `/asn/${asn}`);
  }
  const json = { 'content-type': 'application/json' };
  await check(m, '/v1/crawler/verify', { method: 'POST', headers: json, body: JSON.stringify({ ip: '66.249.66.1', user_agent: 'Mozilla/5.0 (compatible; Googlebot/2.1)' }) });
  await check(m, '/v1/crawler/verify', { method: 'POST', headers: json, body: JSON.stringify({ ip: '157.55.39.1' }) });
  await check(m, '/v1/crawler/verify', { method: 'POST', headers: json, body: JSON.stringify({ ip: '8.8.8.8', user_agent: 'curl/8' }) });
  await check(m, '/v1/data/status');
  await check(m, '/health');
  await check(m, '/metrics', { headers: { authorization: `Bearer ${ADMIN}` } });
  await check(m, '/reload', { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
  await check(m, '/auth/tiers');
  await check(m, '/dashboard');
  await check(m, '/docs');
  await check(m, '/openapi.json');
  expect(problems).toEqual([]);
}, 120_000);

test('the account routes conform after a sign-in', async () => {
  const m = main.url;
  const client = new TestClient();
  idp.user = { sub: 'conform-1', email: 'conform@example.test', email_verified: true, name: 'Conform' };
  const { res } = await client.follow(`${m}/auth/idp`);
  await res.text();
  expect(client.jar.size).toBeGreaterThan(0);
  const origin = { origin: m };
  await check(m, '/auth/me', { client });
  await check(m, '/auth/tiers', { client });
  const created = await check(m, '/auth/keys', { client, method: 'POST', headers: { ...origin, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'conform' }) });
  expect(created.status).toBe(201);
  await check(m, '/auth/keys', { client });
  await check(m, '/auth/usage', { client });
  await check(m, `/auth/keys/${JSON.parse(created.text).id}`, { client, method: 'DELETE', headers: origin });
  await check(m, '/auth/keys/no-such-key', { client, method: 'DELETE', headers: origin });
  await check(m, '/auth/keys', { client, method: 'POST', headers: { ...origin, 'content-type': 'text/plain' }, body: 'x' });
  await check(m, '/auth/keys', { client, method: 'POST', headers: { ...origin, 'content-type': 'application/json' }, body: JSON.stringify({ tier: 'pro' }) });
  await check(m, '/auth/logout', { client, method: 'POST', headers: origin });
  await check(m, '/auth/me', { client });
  expect(problems).toEqual([]);
}, 60_000);

test('errors of each code conform, with the headers that go with them', async () => {
  const m = main.url;
  const codes = new Set<string>();
  const err = async (base: string, target: string, init: RequestInit = {}) => {
    const a = await check(base, target, init);
    if (a.status >= 400 && a.headers.get('content-type')?.includes('json')) codes.add(JSON.parse(a.text).code);
    return a;
  };
  await err(m, '/v1/ip/not-an-ip');
  await err(m, '/v1/ip/1.2.3.4.5');
  await err(m, `/v1/ip/${'9'.repeat(300)}`);
  await err(m, '/v1/ip/8.8.8.8?fields=bogus');
  await err(m, '/v1/ip/8.8.8.8?fields=');
  await err(m, '/v1/ip/8.8.8.8?include=everything');
  await err(m, '/v1/ip/8.8.8.8?include=rdap_contacts');
  await err(m, '/v1/assessment?ipv4=2001:db8::1');
  await err(m, '/v1/assessment?ipv4=1.1.1.1&ipv4=8.8.8.8');
  await err(m, '/v1/asn/AS0');
  await err(m, '/asn/15169');
  await err(m, '/nope.nope');
  await err(m, '/favicon.ico');
  await err(m, '/v1/nope/deeper');
  await err(m, '/docs/nope.js');
  await err(m, '/nope?format=text');
  await err(m, '/?format=xml');
  await err(m, '/v1/crawler/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  await err(m, '/v1/crawler/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'not json' });
  await err(m, '/v1/crawler/verify', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'ip=1.1.1.1' });
  await err(m, '/v1/ip/8.8.8.8', { method: 'DELETE' });
  await err(m, '/health', { method: 'POST' });
  await err(m, '/metrics');
  await err(m, '/reload', { method: 'POST', headers: { authorization: 'Bearer wrong' } });
  await err(m, '/auth/me');
  await err(m, '/auth/callback?code=x&state=y');
  await err(m, '/v1/ip/8.8.8.8', { headers: { 'x-api-key': 'ipi_not-a-real-key' } });
  // Sign-in off: the account routes answer 503 AUTH_DISABLED.
  await err(limited.url, '/auth/me');
  await err(limited.url, '/auth/keys', { method: 'POST' });
  // Rate limits on: headers on answers, then 429 with Retry-After.
  for (let i = 0; i < 200; i++) {
    const a = await err(limited.url, '/v1/ip/current');
    if (a.status === 429) break;
  }
  await err(limited.url, '/v1/data/status');
  // An unparseable Host: 400 BAD_REQUEST before any route (raw HTTP, as no fetch client sends one).
  const raw = await rawRequest(main.url, 'GET /v1/ip/8.8.8.8 HTTP/1.1\r\nHost: bad host\r\nConnection: close\r\n\r\n');
  problems.push(...checker.problems({ method: 'GET', path: '/v1/ip/8.8.8.8', ...raw }));
  codes.add(JSON.parse(raw.text).code);
  expect(problems).toEqual([]);
  expect([...codes].sort()).toEqual(
    ['AUTH_DISABLED', 'BAD_REQUEST', 'FORBIDDEN', 'INVALID_API_KEY', 'INVALID_ASN', 'INVALID_FIELDS', 'INVALID_INCLUDE', 'INVALID_IP', 'INVALID_REQUEST', 'METHOD_NOT_ALLOWED', 'NOT_FOUND', 'OAUTH_STATE_INVALID', 'PRO_REQUIRED', 'RATE_LIMITED', 'UNAUTHORIZED'].sort(),
  );
}, 60_000);

/** One raw HTTP/1.1 exchange over loopback; the answer's status, headers and body. */
async function rawRequest(base: string, request: string): Promise<{ status: number; headers: Headers; text: string }> {
  const { hostname, port } = new URL(base);
  let data = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('raw request timed out')), 5000);
    Bun.connect({
      hostname,
      port: Number(port),
      socket: {
        open: (s) => void s.write(request),
        data: (_s, chunk) => void (data += chunk.toString()),
        close: () => (clearTimeout(timer), resolve()),
        error: (_s, e) => (clearTimeout(timer), reject(e)),
      },
    });
  });
  const [head, ...rest] = data.split('\r\n\r\n');
  const lines = head!.split('\r\n');
  const headers = new Headers(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()] as [string, string]));
  let text = rest.join('\r\n\r\n');
  if (headers.get('transfer-encoding') === 'chunked') text = text.replace(/^[0-9a-f]+\r\n/i, '').replace(/\r\n0\r\n\r\n$/, '');
  return { status: Number(lines[0]!.split(' ')[1]), headers, text };
}

test('every documented 200 of the lookup routes was seen', () => {
  for (const op of ['GET /v1/ip/{ip} 200', 'GET /v1/ip/current 200', 'GET /{ip} 200', 'GET /{ip} 304', 'GET /v1/assessment 200', 'GET /v1/asn/{asn} 200', 'POST /v1/crawler/verify 200', 'GET /v1/data/status 200', 'GET /auth/usage 200']) {
    expect({ op, seen: checker.seen.has(op) }).toEqual({ op, seen: true });
  }
  expect(answers).toBeGreaterThan(400);
});
