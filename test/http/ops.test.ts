/**
 * Status and operations (issue 3 rule 7, spec 4.5, 4.7): public
 * /v1/data/status (readiness per capability, index build time and age, no
 * source paths or vendor names), /health, and the admin-only Prometheus
 * /metrics with requests by route and status, latency, lookups by family,
 * index age and intervals, and rate-limit rejections.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';
import { call, expectError, NO_LIMITS } from './support.ts';

const ADMIN = 'ops-admin-token';
const BUILT_AT = Date.parse('2026-11-01T00:00:00Z'); // the fixture index build time
const NOW = BUILT_AT + 3 * 86_400_000 + 1234; // an injected clock: 3 days and 1.234 s later

let server: RunningServer;
let limited: RunningServer;
beforeAll(async () => {
  server = await startTestServer({ ...NO_LIMITS, IPINTEL_ADMIN_TOKEN: ADMIN }, { now: () => NOW });
  limited = await startTestServer({ IPINTEL_ADMIN_TOKEN: ADMIN });
}, 120_000);
afterAll(async () => {
  await server.stop();
  await limited.stop();
});

const asAdmin = { headers: { authorization: `Bearer ${ADMIN}` } };

/** The value of one sample line of a Prometheus exposition (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return 0;
}

const metrics = async (s: RunningServer) => {
  const a = await call(s.url, '/metrics', asAdmin);
  expect(a.status).toBe(200);
  return a.text;
};

describe('/v1/data/status', () => {
  test('readiness per capability, build time and age from the injected clock', async () => {
    const a = await call(server.url, '/v1/data/status');
    expect(a.status).toBe(200);
    const b = a.json();
    for (const c of ['geolocation', 'asn', 'routing', 'rpki', 'crawlers', 'tor', 'relays', 'threat', 'accounts', 'rdap']) {
      expect({ c, type: typeof b.capabilities[c] }).toEqual({ c, type: 'string' });
    }
    // The fixture has real Tor, crawler, routing and threat feeds, and no RPKI file. Its snapshots are
    // months or years older than the clock (Tor 2024-03, threat lists 2024-2026): stale, not ready.
    expect(b.capabilities).toMatchObject({ tor: 'stale', crawlers: 'stale', routing: 'stale', threat: 'stale', rpki: 'unavailable', proxy: 'unavailable', network_type: 'unavailable' });
    expect(b.coverage.tor).toEqual({ state: 'stale', sources: 1, age_seconds: Math.round((NOW - Date.parse('2024-03-12T14:00:00Z')) / 1000), stale_after_seconds: 86400 });
    expect(b.coverage.rpki).toEqual({ state: 'unavailable', sources: 0, age_seconds: null, stale_after_seconds: 7 * 86400 });
    expect(b.index.built_at).toBe('2026-11-01T00:00:00.000Z');
    expect(b.index.age_seconds).toBe(Math.round((NOW - BUILT_AT) / 1000));
  });

  test('names no source path, file name or feed vendor', async () => {
    const text = (await call(server.url, '/v1/data/status')).text.toLowerCase();
    const forbidden = [await fixtureIndexPath(), '/tmp', 'feeds/', '.csv', '.json', '.gz', '.txt', '.idx', 'spamhaus', 'routeviews', 'feodo', 'abuse.ch', 'cymru', 'x4bnet', 'mullvad', 'apnic', 'googlebot', 'digitalocean'];
    for (const f of forbidden) expect({ f, found: text.includes(f.toLowerCase()) }).toEqual({ f, found: false });
  });
});

describe('/health', () => {
  test('200 with the loaded index, never cached', async () => {
    const a = await call(server.url, '/health');
    expect(a.status).toBe(200);
    expect(a.headers.get('cache-control')).toBe('no-store');
    expect(a.json()).toMatchObject({ status: 'ok', index: { loaded: true, built_at: '2026-11-01T00:00:00.000Z' } });
  });

  test('is not rate limited', async () => {
    for (let i = 0; i < 80; i++) expect((await call(limited.url, '/health')).status).toBe(200);
  });
});

describe('/metrics (admin)', () => {
  test('Prometheus text; requests by route and status, latency histogram', async () => {
    const before = await metrics(server);
    for (let i = 0; i < 7; i++) await call(server.url, `/v1/ip/8.8.${i}.1`);
    await call(server.url, '/v1/ip/not-an-ip');
    await call(server.url, '/v1/ip/not-an-ip');
    const a = await call(server.url, '/metrics', asAdmin);
    expect(a.headers.get('content-type')).toContain('text/plain');
    const after = a.text;
    const ok = { route: '/v1/ip/{ip}', method: 'GET', status: '200' };
    const bad = { route: '/v1/ip/{ip}', method: 'GET', status: '400' };
    expect(sample(after, 'ipintel_http_requests_total', ok) - sample(before, 'ipintel_http_requests_total', ok)).toBe(7);
    expect(sample(after, 'ipintel_http_requests_total', bad) - sample(before, 'ipintel_http_requests_total', bad)).toBe(2);
    const count = (t: string) => sample(t, 'ipintel_http_request_duration_seconds_count', { route: '/v1/ip/{ip}' });
    expect(count(after) - count(before)).toBe(9);
    expect(sample(after, 'ipintel_http_request_duration_seconds_bucket', { route: '/v1/ip/{ip}', le: '+Inf' })).toBe(count(after));
  });

  test('lookups by address family', async () => {
    const before = await metrics(server);
    await call(server.url, '/v1/ip/2001:4860:4860::8888');
    await call(server.url, '/2001:4860:4860::8844');
    await call(server.url, '/v1/ip/1.1.1.1');
    const after = await metrics(server);
    const d = (family: string) => sample(after, 'ipintel_lookups_total', { family }) - sample(before, 'ipintel_lookups_total', { family });
    expect(d('ipv6')).toBe(2);
    expect(d('ipv4')).toBe(1);
  });

  test('index age and intervals', async () => {
    const text = await metrics(server);
    expect(sample(text, 'ipintel_index_intervals', { family: 'ipv4' })).toBe(server.services.index.current.intervalCounts.v4);
    expect(sample(text, 'ipintel_index_intervals', { family: 'ipv6' })).toBeGreaterThan(0);
    expect(sample(text, 'ipintel_index_age_seconds')).toBeGreaterThan(0);
  });

  test('unknown paths share one route label (bounded cardinality)', async () => {
    for (let i = 0; i < 20; i++) await call(server.url, `/x${i}/y/z`);
    const text = await metrics(server);
    expect(text).not.toContain('/x3/y/z');
    expect(sample(text, 'ipintel_http_requests_total', { route: 'other', status: '404' })).toBeGreaterThanOrEqual(20);
  });

  test('rate-limit rejections are counted', async () => {
    const before = sample(await metrics(limited), 'ipintel_rate_limit_rejections_total');
    let rejected = 0;
    for (let i = 0; i < 70; i++) if ((await call(limited.url, '/v1/ip/8.8.8.8')).status === 429) rejected++;
    expect(rejected).toBeGreaterThan(0);
    const after = sample(await metrics(limited), 'ipintel_rate_limit_rejections_total');
    expect(after - before).toBe(rejected);
  });

  test('non-admin callers get 403 FORBIDDEN', async () => {
    expectError(await call(server.url, '/metrics'), 403, 'FORBIDDEN');
    expectError(await call(server.url, '/metrics', { headers: { authorization: 'Bearer wrong' } }), 403, 'FORBIDDEN');
  });
});
