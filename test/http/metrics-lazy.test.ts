/** Metrics observed before prom-client is loaded are replayed, not lost. */
import { beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { IndexHolder } from '../../src/index/holder.ts';
import { HttpMetrics } from '../../src/http/http-metrics.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';

let holder: IndexHolder;
beforeAll(async () => {
  holder = IndexHolder.open(await fixtureIndexPath());
}, 120_000);

test('observations made before loading appear in the exposition', async () => {
  const m = new HttpMetrics(holder);
  m.observe('/v1/ip/{ip}', 'GET', 200, 0.002);
  m.observe('/v1/ip/{ip}', 'GET', 200, 0.003);
  m.observe('/health', 'GET', 200, 0.0001);
  m.lookup(4);
  m.lookup(6);
  m.lookup(6);
  const text = await m.text();
  expect(text).toContain('ipintel_http_requests_total{route="/v1/ip/{ip}",method="GET",status="200"} 2');
  expect(text).toContain('ipintel_http_requests_total{route="/health",method="GET",status="200"} 1');
  expect(text).toContain('ipintel_http_request_duration_seconds_count{route="/v1/ip/{ip}"} 2');
  expect(text).toContain('ipintel_lookups_total{family="ipv6"} 2');
  // After loading, observations go straight to the registry.
  m.observe('/health', 'GET', 200, 0.0001);
  expect(await m.text()).toContain('ipintel_http_requests_total{route="/health",method="GET",status="200"} 2');
});
