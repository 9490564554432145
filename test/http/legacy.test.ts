/**
 * Legacy GET / and GET /{ip} (spec 4.6, 4.9): the flat legacy JSON, text by
 * `format=text` or Accept (q-values, specificity, `*∕*` means JSON), the
 * detail lines, `-` for missing values, `error: <message>` with the JSON
 * status, a trailing newline, and the strong ETag with 304.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { wantsText } from '../../src/http/negotiation.ts';
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { call, expectError, NO_LIMITS } from './support.ts';

let server: RunningServer;
let limited: RunningServer;
beforeAll(async () => {
  server = await startTestServer(NO_LIMITS);
  limited = await startTestServer(); // default limits: 60/min anonymous
}, 120_000);
afterAll(async () => {
  await server.stop();
  await limited.stop();
});

const isText = (a: { headers: Headers }) => (a.headers.get('content-type') ?? '').startsWith('text/plain');

describe('legacy JSON shape', () => {
  test('GET /{ip} is the flat legacy object, not the v1 object', async () => {
    const a = await call(server.url, '/5.101.96.10');
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toContain('application/json');
    const b = a.json();
    expect(b).toMatchObject({ ip: '5.101.96.10', city: 'Amsterdam', region: 'Noord-Holland', country: 'NL', asn: 'AS14061', org: 'AS14061 DigitalOcean' });
    for (const k of ['ip', 'city', 'region', 'country', 'loc', 'org', 'asn', 'timezone']) expect(k in b).toBe(true);
    for (const v of Object.values(b)) expect(v === null || typeof v !== 'object').toBe(true); // flat
    expect('stack' in b || 'classification' in b).toBe(false);
  });

  test('GET / looks up the caller, no-store, no-cache, must-revalidate', async () => {
    const a = await call(server.url, '/');
    expect(a.json().ip).toBe('127.0.0.1');
    expect(a.headers.get('cache-control')).toBe('no-store, no-cache, must-revalidate');
    expect(a.headers.get('etag')).toBeNull();
  });

  test('missing values are null in JSON', async () => {
    const b = (await call(server.url, '/1.2.3.4')).json();
    expect(b.city).toBeNull();
    expect(b.asn).toBeNull();
    expect(b.loc).toBeNull();
  });
});

describe('text representation (spec 4.6)', () => {
  test('format=text, one line with the IP on GET /', async () => {
    const a = await call(server.url, '/?format=text');
    expect(a.status).toBe(200);
    expect(isText(a)).toBe(true);
    expect(a.text).toBe('127.0.0.1\n');
  });

  test('GET /{ip}?format=text is one line', async () => {
    const a = await call(server.url, '/5.101.96.10?format=text');
    expect(a.text.endsWith('\n')).toBe(true);
    expect(a.text.trimEnd().split('\n')).toHaveLength(1);
    expect(a.text).toContain('5.101.96.10');
  });

  test('detail=1: four lines (IP, location, ASN, organization) plus the operator domain when known', async () => {
    const a = await call(server.url, '/5.101.96.10?format=text&detail=1');
    const lines = a.text.split('\n');
    expect(lines.pop()).toBe(''); // ends with a newline
    expect(lines).toEqual(['IP: 5.101.96.10', 'Location: Amsterdam, Noord-Holland, Netherlands (NL)', 'ASN: AS14061', 'Organization: DigitalOcean', 'Domain: digitalocean.com']);
  });

  test('detail=1 on an address with nothing known: four lines, missing values as -', async () => {
    const a = await call(server.url, '/1.2.3.4?format=text&detail=1');
    expect(a.text).toBe('IP: 1.2.3.4\nLocation: -\nASN: -\nOrganization: -\n');
  });

  test('detail=1 on GET / gives the caller in four lines', async () => {
    const a = await call(server.url, '/?format=text&detail=1');
    expect(a.text.split('\n').slice(0, 4).map((l) => l.split(':')[0])).toEqual(['IP', 'Location', 'ASN', 'Organization']);
    expect(a.text.startsWith('IP: 127.0.0.1\n')).toBe(true);
  });

  test('format=text beats Accept: application/json, and format=json beats Accept: text/plain', async () => {
    expect(isText(await call(server.url, '/8.8.8.8?format=text', { headers: { accept: 'application/json' } }))).toBe(true);
    const j = await call(server.url, '/8.8.8.8?format=json', { headers: { accept: 'text/plain' } });
    expect(j.json().ip).toBe('8.8.8.8');
  });

  // Accept headers and whether they select text (rule 3); each checked on the wire.
  const acceptCases: Array<[string | null, boolean]> = [
    [null, false],
    ['*/*', false], // curl's default
    ['text/plain', true],
    ['TEXT/PLAIN', true],
    ['text/plain; charset=utf-8', true],
    ['text/*', true],
    ['text/plain, */*', true], // an exact match is more specific than */*
    ['*/*, text/plain', true],
    ['text/*, */*', true],
    ['application/json, text/plain', false], // equal quality, equal specificity: JSON
    ['text/plain, application/json', false],
    ['text/plain;q=0.5, application/json', false],
    ['text/plain;q=0.9, application/json;q=0.8', true],
    ['text/plain;q=0.5, */*;q=0.1', true],
    ['text/plain;q=0', false],
    ['text/plain;q=0, */*', false],
    ['application/json;q=0, */*', true], // JSON refused explicitly, everything else welcome
    ['application/*;q=0.2, text/plain;q=0.1', false],
    ['text/*;q=0.9, application/json;q=0.9', false], // equal q, JSON's match is more specific
    ['text/plain;q=1.0, application/json;q=0.999', true],
    ['text/plain;q=abc', false], // an invalid q is "not acceptable"
    ['text/plain;q=1.5', false],
    ['text/plain ; q = 0.8 , application/json ; q = 0.7', true],
    ['text/plain;level=1;q=0.8, application/json;q=0.7', true],
    ['text/html', false],
    ['garbage', false],
    ['text/', false],
    ['/plain', false],
    ['', false],
  ];
  for (const [accept, text] of acceptCases) {
    test(`Accept ${JSON.stringify(accept)} -> ${text ? 'text' : 'JSON'}`, async () => {
      const a = await call(server.url, '/8.8.8.8', accept === null ? {} : { headers: { accept } });
      expect(a.status).toBe(200);
      expect(isText(a)).toBe(text);
      expect(wantsText(undefined, accept)).toBe(text);
      if (!text) expect(a.json().ip).toBe('8.8.8.8');
      else expect(a.text.endsWith('\n')).toBe(true);
    });
  }

  test('Vary: Accept on both representations', async () => {
    expect((await call(server.url, '/8.8.8.8')).headers.get('vary')).toContain('Accept');
    expect((await call(server.url, '/8.8.8.8?format=text')).headers.get('vary')).toContain('Accept');
  });
});

describe('text errors: one line "error: <message>" with the JSON route status (rule 6)', () => {
  test('INVALID_IP', async () => {
    const json = await call(server.url, '/not-an-ip');
    expectError(json, 400, 'INVALID_IP');
    const text = await call(server.url, '/not-an-ip?format=text');
    expect(text.status).toBe(400);
    expect(isText(text)).toBe(true);
    expect(text.text).toBe(`error: ${json.json().error}\n`);
  });

  test('selected by Accept too', async () => {
    const a = await call(server.url, '/999.0.0.1', { headers: { accept: 'text/plain' } });
    expect(a.status).toBe(400);
    expect(a.text).toMatch(/^error: [^\n]+\n$/);
  });

  test('NO_CLIENT_IP on GET / as text', async () => {
    const trusting = await startTestServer({ ...NO_LIMITS, IPINTEL_TRUST_PROXY: 'loopback' });
    try {
      const a = await call(trusting.url, '/?format=text', { headers: { 'x-forwarded-for': 'garbage' } });
      expect(a.status).toBe(400);
      expect(a.text).toMatch(/^error: [^\n]+\n$/);
      expectError(await call(trusting.url, '/', { headers: { 'x-forwarded-for': 'garbage' } }), 400, 'NO_CLIENT_IP');
    } finally {
      await trusting.stop();
    }
  });

  test('INVALID_API_KEY as text on a text request', async () => {
    const a = await call(server.url, '/8.8.8.8?format=text', { headers: { 'x-api-key': 'nope' } });
    expect(a.status).toBe(401);
    expect(isText(a)).toBe(true);
    expect(a.text).toMatch(/^error: [^\n]+\n$/);
  });

  test('RATE_LIMITED (429) as text on a text request, with the rate-limit headers', async () => {
    let last: Awaited<ReturnType<typeof call>> | null = null;
    // The anonymous limit is 60/min: the 61st request within the minute is refused.
    for (let i = 0; i < 70; i++) {
      last = await call(limited.url, '/?format=text');
      if (last.status === 429) break;
    }
    expect(last!.status).toBe(429);
    expect(isText(last!)).toBe(true);
    expect(last!.text).toMatch(/^error: [^\n]+\n$/);
    expect(last!.headers.get('x-ratelimit-remaining')).toBe('0');
    // ...and still JSON for a JSON request.
    expectError(await call(limited.url, '/'), 429, 'RATE_LIMITED');
  });
});

describe('ETag and If-None-Match on GET /{ip}', () => {
  test('a strong ETag, stable across requests, different per representation', async () => {
    const a = await call(server.url, '/8.8.8.8');
    const b = await call(server.url, '/8.8.8.8');
    const t = await call(server.url, '/8.8.8.8?format=text');
    const etag = a.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/); // strong: no W/ prefix
    expect(b.headers.get('etag')).toBe(etag);
    expect(t.headers.get('etag')).not.toBe(etag);
    expect((await call(server.url, '/1.1.1.1')).headers.get('etag')).not.toBe(etag);
  });

  test('If-None-Match with the tag answers 304 with no body, the ETag and the cache header', async () => {
    const etag = (await call(server.url, '/8.8.8.8')).headers.get('etag')!;
    for (const inm of [etag, `"x", ${etag}`, `W/${etag}`, '*']) {
      const a = await call(server.url, '/8.8.8.8', { headers: { 'if-none-match': inm } });
      expect(a.status).toBe(304);
      expect(a.text).toBe('');
      expect(a.headers.get('etag')).toBe(etag);
      expect(a.headers.get('cache-control')).toBe('public, max-age=86400');
    }
  });

  test('a different tag, or the JSON tag on a text request, gives 200', async () => {
    const jsonTag = (await call(server.url, '/8.8.8.8')).headers.get('etag')!;
    expect((await call(server.url, '/8.8.8.8', { headers: { 'if-none-match': '"nope"' } })).status).toBe(200);
    const t = await call(server.url, '/8.8.8.8?format=text', { headers: { 'if-none-match': jsonTag } });
    expect(t.status).toBe(200);
    expect(isText(t)).toBe(true);
  });
});
