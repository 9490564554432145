/**
 * Cross-cutting rules: every error in the spec's JSON shape (section 7),
 * NOT_FOUND for unknown routes, INTERNAL_ERROR without a stack trace,
 * malformed input of every kind never a 5xx (a property test over generated
 * strings), /v1 JSON-only, CORS with preflight, Cache-Control on every
 * response, and the OpenAPI document and docs page.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { call, expectError, NO_LIMITS, type Answer } from './support.ts';

let server: RunningServer;
beforeAll(async () => {
  server = await startTestServer({ ...NO_LIMITS, IPINTEL_TRUST_PROXY: 'loopback', IPINTEL_ADMIN_TOKEN: 'admin-secret' });
}, 120_000);
afterAll(() => server.stop());

describe('NOT_FOUND and methods', () => {
  for (const [method, path] of [
    ['GET', '/v1/nope'],
    ['GET', '/v1/ip'],
    ['GET', '/v1/ip/'],
    ['GET', '/v1/ip/1.2.3.4/extra'],
    ['GET', '/a/b/c'],
  ] as const) {
    test(`${method} ${path}`, async () => {
      expectError(await call(server.url, path, { method }), 404, 'NOT_FOUND');
    });
  }
  // A route that exists but not for this method: 405 with Allow (test/http/method-not-allowed.test.ts).
  for (const [method, path] of [
    ['POST', '/v1/ip/8.8.8.8'],
    ['DELETE', '/8.8.8.8'],
    ['PUT', '/v1/asn/AS1'],
  ] as const) {
    test(`${method} ${path}`, async () => {
      const a = await call(server.url, path, { method });
      expectError(a, 405, 'METHOD_NOT_ALLOWED');
      expect(a.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    });
  }
});

describe('undecodable path segments are the route error, not a 500', () => {
  // Elysia gives null for a segment that does not percent-decode.
  const cases: Array<[string, number, string]> = [
    ['/v1/ip/%ZZ', 400, 'INVALID_IP'],
    ['/v1/ip/1.2.3.4%', 400, 'INVALID_IP'],
    ['/v1/ip/%C0%AF', 400, 'INVALID_IP'],
    ['/%ZZ', 400, 'INVALID_IP'],
    ['/%E0%A4%A', 400, 'INVALID_IP'],
    ['/v1/asn/AS%ZZ', 400, 'INVALID_ASN'],
    ['/asn/%', 400, 'INVALID_ASN'],
  ];
  for (const [path, status, code] of cases) {
    test(path, async () => {
      const d = expectError(await call(server.url, path), status, code);
      expect(typeof d.provided).toBe('string');
    });
  }

  test('as text on a legacy text request', async () => {
    const a = await call(server.url, '/%ZZ?format=text');
    expect(a.status).toBe(400);
    expect(a.text).toMatch(/^error: [^\n]+\n$/);
  });

  test('a percent-encoded address is decoded once, not twice', async () => {
    // %2531 is "%31" after one decoding: not an address. Decoding twice would make it "1".
    const d = expectError(await call(server.url, '/v1/ip/%2531.2.3.4'), 400, 'INVALID_IP');
    expect(d.provided).toBe('%31.2.3.4');
    expect((await call(server.url, '/v1/ip/2001%3Adb8%3A%3A1?fields=ip')).json()).toEqual({ ip: '2001:db8::1' });
  });
});

describe('INTERNAL_ERROR', () => {
  test('an unexpected exception is 500 INTERNAL_ERROR with no stack trace or message leaked', async () => {
    const secret = 'radar-exploded-at-/srv/secret/path.ts:42';
    const broken = await startTestServer(NO_LIMITS, {
      radar: {
        lookup: async () => {
          throw new Error(secret);
        },
      },
    });
    const log = console.error;
    console.error = () => {}; // the server logs the failure; keep the test output clean
    try {
      const a = await call(broken.url, '/v1/asn/AS15169');
      expectError(a, 500, 'INTERNAL_ERROR');
      expect(a.text).not.toContain(secret);
      expect(a.text).not.toMatch(/\bat .*\.ts:\d+/);
      expect(a.headers.get('cache-control')).toBe('no-store');
    } finally {
      console.error = log;
      await broken.stop();
    }
  });
});

describe('/v1 routes are JSON-only (spec 4.6 rule 7)', () => {
  for (const path of ['/v1/ip/8.8.8.8', '/v1/ip/current', '/v1/asn/AS15169', '/v1/assessment?ipv4=8.8.8.8', '/v1/data/status', '/v1/ip/bad']) {
    test(path, async () => {
      const a = await call(server.url, `${path}${path.includes('?') ? '&' : '?'}format=text`, { headers: { accept: 'text/plain' } });
      expect(a.headers.get('content-type')).toContain('application/json');
      expect(() => a.json()).not.toThrow();
    });
  }
});

describe('CORS on /v1', () => {
  test('simple requests carry Access-Control-Allow-Origin and expose the rate-limit headers', async () => {
    for (const path of ['/v1/ip/8.8.8.8', '/v1/ip/bad', '/v1/asn/AS15169', '/v1/data/status']) {
      const a = await call(server.url, path, { headers: { origin: 'https://app.example' } });
      expect(a.headers.get('access-control-allow-origin')).toBe('*');
      expect(a.headers.get('access-control-expose-headers') ?? '').toContain('X-RateLimit-Remaining');
    }
  });

  test('preflight: 204 with methods, the X-API-Key header and a max age', async () => {
    const a = await call(server.url, '/v1/ip/8.8.8.8', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key' },
    });
    expect(a.status).toBe(204);
    expect(a.headers.get('access-control-allow-origin')).toBe('*');
    expect(a.headers.get('access-control-allow-methods')).toContain('GET');
    expect((a.headers.get('access-control-allow-headers') ?? '').toLowerCase()).toContain('x-api-key');
    expect(Number(a.headers.get('access-control-max-age'))).toBeGreaterThan(0);
  });

  test('a preflight of POST /v1/crawler/verify allows Content-Type', async () => {
    const a = await call(server.url, '/v1/crawler/verify', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(a.status).toBe(204);
    expect(a.headers.get('access-control-allow-methods')).toContain('POST');
    expect((a.headers.get('access-control-allow-headers') ?? '').toLowerCase()).toContain('content-type');
  });
});

describe('Cache-Control on every response (spec 4.9)', () => {
  const expected: Array<[string, RequestInit, string]> = [
    ['/v1/ip/8.8.8.8', {}, 'public, max-age=86400'],
    ['/v1/ip/2001:4860::8844', {}, 'public, max-age=86400'],
    ['/8.8.8.8', {}, 'public, max-age=86400'],
    ['/8.8.8.8?format=text', {}, 'public, max-age=86400'],
    ['/v1/assessment?ipv4=8.8.8.8&ipv6=2001:4860::8844', {}, 'public, max-age=86400'],
    ['/v1/ip/current', {}, 'no-store'],
    ['/', {}, 'no-store, no-cache, must-revalidate'],
    ['/?format=text', {}, 'no-store, no-cache, must-revalidate'],
    ['/v1/assessment', {}, 'no-store'],
    ['/v1/crawler/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"ip":"8.8.8.8"}' }, 'no-store'],
    ['/v1/ip/bad', {}, 'no-store'],
    ['/nope/nope', {}, 'no-store'],
    ['/health', {}, 'no-store'],
    ['/metrics', {}, 'no-store'],
    ['/reload', { method: 'POST' }, 'no-store'],
  ];
  for (const [path, init, cc] of expected) {
    test(`${init.method ?? 'GET'} ${path}: ${cc}`, async () => {
      expect((await call(server.url, path, init)).headers.get('cache-control')).toBe(cc);
    });
  }

  test('every other route still sends a Cache-Control header', async () => {
    for (const path of ['/v1/asn/AS15169', '/asn/AS15169', '/v1/data/status', '/openapi.json', '/docs']) {
      expect({ path, cc: (await call(server.url, path)).headers.get('cache-control') }).toEqual({ path, cc: expect.any(String) });
    }
  });

  test('public responses are shareable: no Vary: * (it makes every shared cache miss)', async () => {
    for (const path of ['/v1/ip/8.8.8.8', '/v1/asn/AS15169', '/v1/assessment?ipv4=8.8.8.8', '/8.8.8.8']) {
      const a = await call(server.url, path, { headers: { origin: 'https://app.example' } });
      expect(a.headers.get('cache-control')).toStartWith('public');
      expect({ path, vary: a.headers.get('vary') }).not.toEqual({ path, vary: '*' });
    }
  });
});

describe('OpenAPI and docs', () => {
  test('/openapi.json names every route of the issue with its parameters', async () => {
    const doc = (await call(server.url, '/openapi.json')).json();
    const ops: Array<[string, string, string[]]> = [
      ['get', '/v1/ip/current', ['fields', 'include', 'at']],
      ['get', '/v1/ip/{ip}', ['ip', 'fields', 'include', 'at']],
      ['get', '/v1/assessment', ['ipv4', 'ipv6', 'at']],
      ['get', '/v1/asn/{asn}', ['asn']],
      ['get', '/asn/{asn}', ['asn']],
      ['get', '/v1/data/status', []],
      ['get', '/', ['format', 'detail']],
      ['get', '/{ip}', ['ip', 'format', 'detail', 'If-None-Match']],
      ['get', '/health', []],
      ['get', '/metrics', []],
      ['post', '/reload', []],
      ['post', '/v1/crawler/verify', []],
    ];
    for (const [method, path, params] of ops) {
      const op = doc.paths?.[path]?.[method];
      expect({ path, defined: op !== undefined }).toEqual({ path, defined: true });
      const names = (op.parameters ?? []).map((p: { name: string }) => p.name);
      expect({ path, names: names.sort() }).toEqual({ path, names: [...params].sort() });
    }
  });

  test('/openapi.json documents the error responses of each public route', async () => {
    const doc = (await call(server.url, '/openapi.json')).json();
    const errors: Array<[string, string, string[]]> = [
      ['get', '/v1/ip/{ip}', ['200', '400', '401', '403', '429']],
      ['get', '/v1/ip/current', ['200', '400', '401', '403', '429']],
      ['get', '/v1/asn/{asn}', ['200', '400']],
      ['get', '/v1/assessment', ['200', '400']],
      ['get', '/{ip}', ['200', '304', '400']],
      ['get', '/metrics', ['200', '403']],
      ['post', '/reload', ['200', '400', '403']],
    ];
    for (const [method, path, codes] of errors) {
      const responses = Object.keys(doc.paths[path][method].responses ?? {});
      for (const c of codes) expect({ path, has: c, ok: responses.includes(c) }).toEqual({ path, has: c, ok: true });
    }
  });

  test('/docs is an HTML page', async () => {
    const a = await call(server.url, '/docs');
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toContain('text/html');
  });
});

/** The spec's error rules for any answer: never 5xx, JSON errors in the error shape, text errors one line. */
function checkAnswer(a: Answer, label: string): void {
  if (a.status >= 500) throw new Error(`${label}: ${a.status} ${a.text.slice(0, 200)}`);
  if (a.status < 400) return;
  const type = a.headers.get('content-type') ?? '';
  if (type.startsWith('text/plain')) {
    if (!/^error: [^\n]*\n$/.test(a.text)) throw new Error(`${label}: bad text error ${JSON.stringify(a.text)}`);
    return;
  }
  const body = a.json();
  const keys = Object.keys(body).sort().join(',');
  if (keys !== 'code,details,error' || typeof body.error !== 'string' || typeof body.code !== 'string' || typeof body.details !== 'object' || body.details === null) {
    throw new Error(`${label}: not the error shape: ${a.text.slice(0, 200)}`);
  }
}

describe('malformed input never gives a 5xx (property test)', () => {
  // Characters that stress parsing: address punctuation, percent-escapes, separators, controls, non-ASCII.
  const piece = fc.constantFrom('1', '9', '0', '255', '256', '.', ':', '::', 'f', 'ffff', '%', '%ZZ', '%00', '%2F', '%C0', '%E2%80', '/', '?', '&', '#', ',', ';', '=', ' ', '\t', 'AS', 'as', '-', '[', ']', 'é', '💥', '\u0000', '..', 'x');
  const junk = fc.array(piece, { minLength: 0, maxLength: 12 }).map((a) => a.join(''));
  const route = fc.constantFrom('/v1/ip/', '/', '/v1/asn/', '/asn/', '/v1/assessment?ipv4=', '/v1/assessment?ipv6=', '/v1/ip/8.8.8.8?fields=', '/v1/ip/8.8.8.8?include=', '/8.8.8.8?format=', '/8.8.8.8?detail=');

  test('paths and query values', async () => {
    await fc.assert(
      fc.asyncProperty(route, junk, async (r, j) => {
        let url: string;
        try {
          url = new URL(server.url + r + j).href;
        } catch {
          return; // not even a URL: nothing a client could send
        }
        checkAnswer(await call(url, ''), r + JSON.stringify(j));
      }),
      { numRuns: 400, seed: 3 },
    );
  }, 60_000);

  test('headers: Accept, X-Forwarded-For, Forwarded, X-API-Key, If-None-Match', async () => {
    const headerValue = fc.string({ maxLength: 40 }).map((s) => s.replace(/[\r\n\0]/g, ''));
    const name = fc.constantFrom('accept', 'x-forwarded-for', 'forwarded', 'x-api-key', 'if-none-match', 'authorization');
    const path = fc.constantFrom('/', '/?format=text', '/8.8.8.8', '/v1/ip/current', '/v1/ip/8.8.8.8', '/v1/assessment', '/metrics');
    await fc.assert(
      fc.asyncProperty(path, name, headerValue, async (p, n, v) => {
        let a: Answer;
        try {
          a = await call(server.url, p, { headers: { [n]: v } });
        } catch (e) {
          if (e instanceof TypeError && /header/i.test(e.message)) return; // fetch refuses the header value itself
          throw e;
        }
        checkAnswer(a, `${p} ${n}: ${JSON.stringify(v)}`);
      }),
      { numRuns: 300, seed: 5 },
    );
  }, 60_000);

  test('crawler verify bodies', async () => {
    const body = fc.oneof(fc.string({ maxLength: 60 }), fc.json().map((j) => j), fc.record({ ip: fc.string({ maxLength: 20 }), user_agent: fc.anything() }).map((o) => JSON.stringify(o)));
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        checkAnswer(await call(server.url, '/v1/crawler/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: b }), JSON.stringify(b));
      }),
      { numRuns: 150, seed: 7 },
    );
  }, 60_000);
});
