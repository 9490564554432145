/**
 * Issue 17: every path under /auth/ was its own metrics route label, so a
 * client walking random paths grew the counters (and the next scrape)
 * without bound. Labels now come from the route table: whatever the paths
 * and methods, the label set is the table's, plus `other`.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { RunningServer } from '../../src/host/start-server.ts';
import { createApp } from '../../src/http/app.ts';
import { startTestServer } from '../helpers/test-server.ts';

const ADMIN = 'labels-admin';
let server: RunningServer;
beforeAll(async () => {
  server = await startTestServer({ IPINTEL_RATE_LIMITS: 'off', IPINTEL_ADMIN_TOKEN: ADMIN });
}, 120_000);
afterAll(() => server.stop());

/** The label values of one metric in a scrape. */
function labelValues(text: string, metric: string, label: string): Set<string> {
  const out = new Set<string>();
  const re = new RegExp(`^${metric}\\{[^}]*\\b${label}="([^"]*)"`, 'gm');
  for (const m of text.matchAll(re)) out.add(m[1]);
  return out;
}

test('random paths under /auth/ and elsewhere share bounded route labels', async () => {
  const paths: string[] = [];
  for (let i = 0; i < 200; i++) paths.push(`/auth/probe-${i}`, `/probe-${i}/a`, `/v1/probe-${i}/x/y/z`, `/docs/probe-${i}`);
  for (let i = 0; i < paths.length; i += 50) {
    await Promise.all(paths.slice(i, i + 50).map(async (p, j) => (await fetch(server.url + p, { method: j % 3 === 0 ? 'DELETE' : 'GET' })).arrayBuffer()));
  }
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
  const routes = labelValues(text, 'ipintel_http_requests_total', 'route');
  const latencyRoutes = labelValues(text, 'ipintel_http_request_duration_seconds_count', 'route');
  const table = createApp(server.services).table;
  expect([...routes].filter((r) => r.includes('probe'))).toEqual([]);
  expect([...routes].every((r) => table.labels.includes(r))).toBe(true);
  expect([...latencyRoutes].every((r) => table.labels.includes(r))).toBe(true);
  expect(routes.has('other')).toBe(true);
  expect(routes.size).toBeLessThanOrEqual(table.labels.length);
  // 800 requests, 4 shapes: a handful of series, not hundreds.
  const series = text.split('\n').filter((l) => l.startsWith('ipintel_http_requests_total{')).length;
  expect(series).toBeLessThan(20);
});
