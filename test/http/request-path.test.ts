/** The request path's helpers: pathOf agrees with the URL parser on every URL a server can receive. */
import { expect, test } from 'bun:test';
import fc from 'fast-check';
import { pathOf, routeOf } from '../../src/http/server.ts';

test('pathOf(url) equals new URL(url).pathname for normalised URLs', () => {
  const extra = fc.constantFrom('', '?', '?a=b/c', '#x', '?q#f/g', '/%ZZ', '/..%2F', '/a//b');
  fc.assert(
    fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), extra, (u, e) => {
      let href: string;
      try {
        href = new URL(u + e).href; // what a server hands its handler
      } catch {
        return;
      }
      expect(pathOf(href)).toBe(new URL(href).pathname);
    }),
    { numRuns: 2000, seed: 11 },
  );
});

test('routeOf keeps metric labels bounded', () => {
  expect(routeOf('/v1/ip/1.2.3.4')).toBe('/v1/ip/{ip}');
  expect(routeOf('/v1/ip/current')).toBe('/v1/ip/current');
  expect(routeOf('/1.2.3.4')).toBe('/{ip}');
  expect(routeOf('/asn/AS1')).toBe('/asn/{asn}');
  expect(routeOf('/a/b/c')).toBe('other');
});
