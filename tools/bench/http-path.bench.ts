/**
 * In-process cost of the request path, free of sockets and of the load
 * generator: CPU microseconds per request through createFetchHandler (the
 * one dispatch and the route) for random addresses, against constructing a
 * fixed Response of the same size in the same run. Complements
 * http.bench.ts, whose socket numbers swing with the machine's load.
 *
 *   bun tools/bench/http-path.bench.ts [index] [--requests 30000]
 */
import { loadConfig } from '../../src/config.ts';
import { createApp } from '../../src/http/app.ts';
import { createFetchHandler } from '../../src/http/server.ts';
import { createServices } from '../../src/host/start-server.ts';
import { fixtureIndexPath } from '../../test/helpers/fixture-index.ts';
import { SHARED_FEEDS_DIR } from '../../test/helpers/shared-feeds.ts';
import { prng } from '../../test/helpers/prng.ts';
import { printTable } from './bench-kit.ts';

const argv = process.argv.slice(2);
const at = argv.indexOf('--requests');
const n = at >= 0 ? Number(argv[at + 1]) : 30_000;
const index = argv[0] && !argv[0].startsWith('--') ? argv[0] : await fixtureIndexPath(SHARED_FEEDS_DIR);
const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', IPINTEL_INDEX: index, IPINTEL_DB: ':memory:', IPINTEL_RATE_LIMITS: 'off', IPINTEL_DNS_SERVERS: '127.0.0.1:9' });
const services = await createServices(config);
const handle = createFetchHandler(services, createApp(services));

const rnd = prng(42);
const byte = () => Math.floor(rnd() * 256);
const ips = Array.from({ length: 20_000 }, () => `${1 + Math.floor(rnd() * 223)}.${byte()}.${byte()}.${1 + Math.floor(rnd() * 254)}`);
const fixed = 'x'.repeat(2991);

/** CPU microseconds per call of f over n calls (after a warm-up). */
async function cpuPerCall(f: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 5000; i++) await f(i % ips.length);
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await f(i % ips.length);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / n;
}

const cases: Array<[string, (i: number) => Promise<unknown>]> = [
  ['fixed Response, 2991 bytes (baseline)', () => new Response(fixed, { headers: { 'content-type': 'application/json' } }).text()],
  ['GET /v1/ip/{ip} (full object)', async (i) => (await handle(new Request(`http://127.0.0.1/v1/ip/${ips[i]}`), null)).text()],
  ['GET /v1/ip/{ip}?fields=ip,location', async (i) => (await handle(new Request(`http://127.0.0.1/v1/ip/${ips[i]}?fields=ip,location`), null)).text()],
  ['GET /v1/ip/{ip}?fields=ip,location,network', async (i) => (await handle(new Request(`http://127.0.0.1/v1/ip/${ips[i]}?fields=ip,location,network`), null)).text()],
  ['GET /v1/ip/{ip}?fields=score,decision', async (i) => (await handle(new Request(`http://127.0.0.1/v1/ip/${ips[i]}?fields=score,decision`), null)).text()],
  ['GET /{ip}?format=text', async (i) => (await handle(new Request(`http://127.0.0.1/${ips[i]}?format=text`), null)).text()],
  ['GET /health', async () => (await handle(new Request('http://127.0.0.1/health'), null)).text()],
];
const rows: (string | number)[][] = [['request', 'cpu us/request (median of 3)']];
for (const [name, f] of cases) {
  const xs = [await cpuPerCall(f), await cpuPerCall(f), await cpuPerCall(f)].sort((a, b) => a - b);
  rows.push([name, xs[1].toFixed(1)]);
}
console.log(`index ${index}; ${n} requests per measurement, random IPv4 addresses (seeded)\n`);
printTable(rows);
process.exit(0);
