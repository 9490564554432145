/**
 * The request's path, read once: equal to the URL parser's pathname for
 * every URL a server builds from a good Host, equal to the path Elysia
 * routes by, and null for the URLs Bun builds from a Host it cannot parse.
 */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import { RequestTargets } from '../../src/http/request-target.ts';

/** Elysia's own path extraction with `standardHostname: false` (its compiled handler). */
const elysiaPath = (u: string) => {
  const s = u.indexOf('/', 7);
  const qi = u.indexOf('?', s + 1);
  return u.substring(s, qi === -1 ? undefined : qi);
};

test('the path equals new URL(url).pathname and Elysia\'s path for normalised http URLs', () => {
  const targets = new RequestTargets();
  const extra = fc.constantFrom('', '?', '?a=b/c', '/%ZZ', '/..%2F', '/a//b', '?x=http://y/z');
  let read = 0;
  fc.assert(
    fc.property(fc.webUrl({ validSchemes: ['http'], withQueryParameters: true }), extra, (u, e) => {
      let href: string;
      try {
        href = new URL(u + e).href; // what a server hands its handler
      } catch {
        return;
      }
      if (href.includes('#')) return;
      const path = targets.pathOf(href);
      expect(path).toBe(new URL(href).pathname);
      expect(path).toBe(elysiaPath(href));
      read++;
    }),
    { numRuns: 2000, seed: 11 },
  );
  expect(read).toBeGreaterThan(1000);
});

test('URLs Bun builds from a Host it cannot parse, or with a fragment, have no path', () => {
  const targets = new RequestTargets();
  for (const url of [
    '/auth/x/v1/ip/current', // Host: a/ (or x?, x#, x\, none): the bare target
    '/v1/data/status?x=1',
    'http://a:99999/a/../b?x=1', // a port out of range: not normalised
    'http://256.1.1.1/v1/ip/1.1.1.1',
    'http://[zz]/health',
    'http://a%zz/health',
    'http://xn--zz/health',
    'http://127.0.0.1/v1/ip/1.1.1.1#x', // a fragment Elysia would route as part of the path
    'http://127.0.0.1/1.1.1.1#/x',
    'https://127.0.0.1/health', // not this server's scheme
  ]) {
    expect({ url, path: targets.pathOf(url) }).toEqual({ url, path: null });
  }
  // A known origin stays known; a bad one never becomes known.
  expect(targets.pathOf('http://api.example:8080/v1/ip/1.1.1.1?fields=ip')).toBe('/v1/ip/1.1.1.1');
  expect(targets.pathOf('http://api.example:8080/health')).toBe('/health');
  expect(targets.pathOf('http://a:99999/health')).toBeNull();
  expect(targets.pathOf('http://a:99999/health')).toBeNull();
});
