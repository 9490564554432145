/**
 * The route table is the router: each path names the declared route the
 * precedence rules pick (a static segment beats a parameter, a parameter
 * beats a wildcard, a parameter is never empty, one trailing slash is
 * ignored), with and without sign-in, and every label is a declared path.
 */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import { RouteTable, handlerFor } from '../../src/http/route-table.ts';
import { NOT_ADDRESSES, routeDeclarations } from '../../src/http/routes/table.ts';

const tables = { on: new RouteTable<unknown>(routeDeclarations(true), NOT_ADDRESSES), off: new RouteTable<unknown>(routeDeclarations(false), NOT_ADDRESSES) };

test('each path names the route the precedence rules pick', () => {
  const cases: Array<[string, string | null, string | null]> = [
    // path, label with sign-in, label without
    ['/', '/', '/'],
    ['//', null, null],
    ['/8.8.8.8', '/{ip}', '/{ip}'],
    ['/8.8.8.8/', '/{ip}', '/{ip}'],
    ['/health', '/health', '/health'],
    ['/health/', '/health', '/health'],
    ['/health//', null, null],
    ['/favicon.ico', null, null],
    ['/robots.txt', null, null],
    ['/v1/ip/current', '/v1/ip/current', '/v1/ip/current'],
    ['/v1/ip/1.1.1.1', '/v1/ip/{ip}', '/v1/ip/{ip}'],
    ['/v1/ip/', null, null],
    ['/v1/ip//', null, null],
    ['/v1/asn/AS1', '/v1/asn/{asn}', '/v1/asn/{asn}'],
    ['/asn/AS1', '/asn/{asn}', '/asn/{asn}'],
    ['/docs', '/docs', '/docs'],
    ['/docs/', '/docs', '/docs'],
    ['/docs/a/b/c/d/e/f', '/docs/*', '/docs/*'],
    ['/auth', '/{ip}', '/auth'],
    ['/auth/', '/{ip}', '/auth'],
    ['/auth/keys', '/auth/keys', '/auth/*'],
    ['/auth/keys/k1', '/auth/keys/{id}', '/auth/*'],
    ['/auth/nope', null, '/auth/*'],
    ['/v1', '/{ip}', '/{ip}'],
    ['/v1/ip/1.1.1.1/x', null, null],
    ['/a/b/c/d/e', null, null],
  ];
  for (const [path, on, off] of cases) {
    expect({ path, on: tables.on.match(path)?.label ?? null, off: tables.off.match(path)?.label ?? null }).toEqual({ path, on, off });
  }
});

test('matching in place inside a URL gives what matching the sliced path gives, and every label is declared', () => {
  const segment = fc.oneof(fc.constantFrom('v1', 'ip', 'asn', 'auth', 'keys', 'current', 'docs', 'health', 'favicon.ico', '', 'x', '%2F'), fc.webSegment());
  const path = fc.tuple(fc.array(segment, { maxLength: 6 }), fc.constantFrom('', '/')).map(([s, tail]) => `/${s.join('/')}${tail}`);
  for (const table of [tables.on, tables.off]) {
    fc.assert(
      fc.property(path, (p) => {
        const url = `http://h:1${p}?q=/x`;
        const inPlace = table.matchIn(url, 'http://h:1'.length, url.indexOf('?'));
        expect(inPlace).toBe(table.match(p));
        if (inPlace !== null) expect(table.labels).toContain(inPlace.label);
      }),
      { numRuns: 2000, seed: 3 },
    );
  }
});

test('HEAD is answered wherever GET is, ALL routes take any method, others are refused', () => {
  const keys = tables.on.match('/auth/keys')!;
  expect(keys.allow).toBe('GET, POST, HEAD, OPTIONS');
  expect(handlerFor(keys, 'HEAD')).toBe(handlerFor(keys, 'GET'));
  expect(handlerFor(keys, 'DELETE')).toBeUndefined();
  const disabled = tables.off.match('/auth/keys')!;
  for (const m of ['GET', 'PATCH', 'PUT', 'DELETE']) expect(handlerFor(disabled, m)).toBeDefined();
});
