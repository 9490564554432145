/**
 * The request path adds to plain counters; /metrics hands them to
 * prom-client. The exposition must be what prom-client's own Counter and
 * Histogram would print for the same observations.
 */
import { beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { IndexHolder } from '../../src/index/holder.ts';
import { HttpMetrics, LATENCY_BUCKETS, MAX_LATENCY_SERIES, MAX_REQUEST_SERIES, OTHER_METHOD, OVERFLOW_ROUTE } from '../../src/http/http-metrics.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';

let holder: IndexHolder;
beforeAll(async () => {
  holder = IndexHolder.open(await fixtureIndexPath());
}, 120_000);

const linesOf = (text: string, metric: string) => text.split('\n').filter((l) => l.startsWith(metric));

test('requests and latency print exactly as prom-client Counter and Histogram print them', async () => {
  const observation = fc.record({
    route: fc.constantFrom('/v1/ip/{ip}', '/health', 'other'),
    status: fc.constantFrom(200, 400, 404),
    // Exact bucket bounds included: a value equal to a bound belongs to that bucket.
    seconds: fc.oneof(fc.constantFrom(...LATENCY_BUCKETS), fc.double({ min: 0, max: 3, noNaN: true })),
  });
  await fc.assert(
    fc.asyncProperty(fc.array(observation, { maxLength: 60 }), fc.integer({ min: 0, max: 40 }), async (obs, split) => {
      const mine = new HttpMetrics(holder);
      const registry = new Registry();
      const requests = new Counter({ name: 'ipintel_http_requests_total', help: 'x', labelNames: ['route', 'method', 'status'], registers: [registry] });
      const latency = new Histogram({ name: 'ipintel_http_request_duration_seconds', help: 'x', labelNames: ['route'], buckets: [...LATENCY_BUCKETS], registers: [registry] });
      // Observations before and after a scrape: the second scrape must count both.
      for (const [i, o] of obs.entries()) {
        if (i === split) await mine.text();
        mine.observe(o.route, 'GET', o.status, o.seconds);
        requests.inc({ route: o.route, method: 'GET', status: String(o.status) });
        latency.observe({ route: o.route }, o.seconds);
      }
      const text = await mine.text();
      const reference = await registry.metrics();
      const sorted = (t: string, m: string) => linesOf(t, m).sort();
      expect(sorted(text, 'ipintel_http_requests_total')).toEqual(sorted(reference, 'ipintel_http_requests_total'));
      expect(sorted(text, 'ipintel_http_request_duration_seconds')).toEqual(sorted(reference, 'ipintel_http_request_duration_seconds'));
    }),
    { numRuns: 150 },
  );
});

test('lookups by family count across scrapes', async () => {
  const m = new HttpMetrics(holder);
  m.lookup(4);
  expect(await m.text()).toContain('ipintel_lookups_total{family="ipv4"} 1');
  m.lookup(4);
  m.lookup(6);
  const text = await m.text();
  expect(text).toContain('ipintel_lookups_total{family="ipv4"} 2');
  expect(text).toContain('ipintel_lookups_total{family="ipv6"} 1');
});

test('series stay bounded whatever a caller passes: methods beyond the standard ones share a label, routes beyond the bound one series', async () => {
  const m = new HttpMetrics(holder);
  for (const method of ['PROPFIND', 'FOO', 'get', 'M-SEARCH']) m.observe('/health', method, 405, 0.001);
  m.observe('/health', 'GET', 200, 0.001);
  let text = await m.text();
  const methods = new Set([...text.matchAll(/^ipintel_http_requests_total\{[^}]*method="([^"]*)"/gm)].map((x) => x[1]));
  expect([...methods].sort()).toEqual(['GET', OTHER_METHOD]);
  expect(text).toContain(`ipintel_http_requests_total{route="/health",method="${OTHER_METHOD}",status="405"} 4`);

  for (let i = 0; i < 3 * MAX_REQUEST_SERIES; i++) m.observe(`/unbounded-${i}`, 'GET', 200, 0.001);
  text = await m.text();
  const series = text.split('\n').filter((l) => l.startsWith('ipintel_http_requests_total{'));
  expect(series.length).toBeLessThanOrEqual(MAX_REQUEST_SERIES + 1);
  const latencySeries = text.split('\n').filter((l) => l.startsWith('ipintel_http_request_duration_seconds_count{'));
  expect(latencySeries.length).toBeLessThanOrEqual(MAX_LATENCY_SERIES + 1);
  // Nothing is lost: the folded observations are counted under the overflow series.
  const total = series.reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  expect(total).toBe(5 + 3 * MAX_REQUEST_SERIES);
  expect(text).toContain(`route="${OVERFLOW_ROUTE}"`);
});
