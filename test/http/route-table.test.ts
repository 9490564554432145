/**
 * The route table names the route Elysia's router picks, for every path
 * (the metrics label and the limiter's view are the router's), and its
 * labels are a fixed set whatever the path.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { Elysia } from 'elysia';
import fc from 'fast-check';
import { loadConfig } from '../../src/config.ts';
import { createApp } from '../../src/http/app.ts';
import { allowsMethod, NOT_ADDRESSES, OTHER_ROUTE, routeTableOf, type RouteTable } from '../../src/http/route-table.ts';
import { createServices } from '../../src/server.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';
import { UNREACHABLE_OIDC_ENV } from '../helpers/oauth-env.ts';

const OAUTH = UNREACHABLE_OIDC_ENV;

interface Under {
  routes: Array<{ method: string; path: string }>;
  table: RouteTable;
  /** A router with the app's routes whose handlers answer their own pattern. */
  mirror: { handle(r: Request): Promise<Response> };
}

async function appUnder(env: Record<string, string>): Promise<Under> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', IPINTEL_INDEX: await fixtureIndexPath(), IPINTEL_DB: ':memory:', ...env });
  const app = createApp(await createServices(config));
  const routes = app.routes.map((r) => ({ method: r.method, path: r.path }));
  // Same router options as the app (app.ts): only the handlers differ.
  let mirror = new Elysia({ handler: { standardHostname: false } }) as unknown as Elysia;
  for (const r of routes) {
    if (r.method === 'OPTIONS') continue;
    mirror = mirror.route(r.method, r.path, () => new Response(r.path, { headers: { 'x-route': r.path } })) as unknown as Elysia;
  }
  return { routes, table: routeTableOf(app), mirror };
}

const labelOf = (path: string) => path.replace(/:([^/]+)/g, '{$1}');

let disabled: Under;
let enabled: Under;
beforeAll(async () => {
  disabled = await appUnder({});
  enabled = await appUnder(OAUTH);
}, 120_000);

/** Paths built from the routes' own segments, odd ones and slashes: where a router can go wrong. */
const segment = fc.oneof(
  fc.constantFrom('v1', 'ip', 'asn', 'auth', 'keys', 'current', 'data', 'status', 'health', 'metrics', 'reload', 'docs', 'openapi.json', 'dashboard', 'favicon.ico', 'robots.txt', 'idp', 'callback', 'me', 'usage', 'tiers', 'logout', 'assessment', 'crawler', 'verify'),
  fc.constantFrom('', '1.2.3.4', '::1', 'AS1', '%20', '%2F', 'x'),
  fc.webSegment(),
);
const path = fc.tuple(fc.array(segment, { minLength: 0, maxLength: 5 }), fc.constantFrom('', '/', '//')).map(([segs, tail]) => `/${segs.join('/')}${tail}`);
const METHODS = ['GET', 'POST', 'DELETE', 'PUT', 'HEAD'];

describe('the table and the router pick the same route', () => {
  for (const which of ['sign-in off', 'sign-in on'] as const) {
    test(which, async () => {
      const { table, mirror } = which === 'sign-in off' ? disabled : enabled;
      const seen = { routed: 0, unrouted: 0, refused: 0 };
      await fc.assert(
        fc.asyncProperty(path, fc.constantFrom(...METHODS), async (p, method) => {
          const entry = table.match(p);
          const res = await mirror.handle(new Request(`http://h${p}`, { method }));
          const routed = res.status === 200 ? labelOf(res.headers.get('x-route') ?? '') : null;
          if (NOT_ADDRESSES.includes(p)) {
            // Files that are no address: the table answers 404 before the router would try a lookup.
            expect(entry).toBeNull();
          } else if (entry === null) {
            seen.unrouted++;
            expect({ p, method, routed }).toEqual({ p, method, routed: null });
          } else if (allowsMethod(entry, method)) {
            seen.routed++;
            // HEAD is answered by the GET route, whose handler the mirror runs too.
            expect({ p, method, routed }).toEqual({ p, method, routed: entry.label });
          } else seen.refused++; // 405 before the router runs
        }),
        { numRuns: 3000, seed: 17, examples: [['/', 'GET'], ['//', 'GET'], ['/reload', 'GET'], ['/auth', 'GET'], ['/auth/', 'POST'], ['/auth//', 'GET'], ['/v1/ip//', 'GET'], ['/v1/ip/x/', 'GET'], ['/health/', 'GET']] },
      );
      // Each outcome was met often: the property compared routes, not only 404s.
      expect(Math.min(seen.routed, seen.unrouted, seen.refused)).toBeGreaterThan(100);
    }, 60_000);
  }
});

test('every path gets one of a fixed set of labels', () => {
  for (const { table } of [disabled, enabled]) {
    expect(table.labels.length).toBeLessThanOrEqual(30);
    fc.assert(
      fc.property(fc.oneof(path, fc.webPath()), (p) => {
        const label = table.match(p)?.label ?? OTHER_ROUTE;
        expect(table.labels).toContain(label);
      }),
      { numRuns: 2000, seed: 3 },
    );
  }
  const { table } = enabled;
  expect(table.match('/v1/ip/1.2.3.4')?.label).toBe('/v1/ip/{ip}');
  expect(table.match('/v1/ip/current')?.label).toBe('/v1/ip/current');
  expect(table.match('/1.2.3.4')?.label).toBe('/{ip}');
  expect(table.match('/asn/AS1')?.label).toBe('/asn/{asn}');
  expect(table.match('/auth/keys/abc')?.label).toBe('/auth/keys/{id}');
  expect(table.match('/auth/anything')).toBeNull();
  expect(table.match('/a/b/c')).toBeNull();
  expect(table.match('/favicon.ico')).toBeNull();
  expect(disabled.table.match('/auth/anything')?.label).toBe('/auth/*');
  // Deeper than any pattern: only a wildcard can take it.
  expect(disabled.table.match('/auth/a/b/c/d/e/f/g/h')?.label).toBe('/auth/*');
  expect(enabled.table.match('/auth/a/b/c/d/e/f/g/h')).toBeNull();
  expect(enabled.table.match('/v1/ip/1.2.3.4/a/b/c/d/e')).toBeNull();
});

test('Allow lists the methods registered on the route, from the app itself', () => {
  const { table, routes } = enabled;
  expect(table.match('/reload')?.allow).toBe('POST, OPTIONS');
  expect(table.match('/auth/keys')?.allow).toBe('GET, POST, HEAD, OPTIONS');
  expect(table.match('/auth/keys/k1')?.allow).toBe('DELETE, OPTIONS');
  for (const r of routes.filter((r) => r.method !== 'OPTIONS')) {
    const entry = table.match(r.path.replace(/:[^/]+/g, 'x'));
    expect(entry && allowsMethod(entry, r.method)).toBe(true);
  }
});
