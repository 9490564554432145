/**
 * A server for tools/bench/http.bench.ts, run in its own process so the load
 * generator and each server get their own core:
 *   bun tools/bench/http-target.ts ipintel <index>   the real server (limits off)
 *   bun tools/bench/http-target.ts bare <bytes>      Bun.serve answering a fixed JSON body of that size
 *   bun tools/bench/http-target.ts floor <bytes>     Bun.serve doing what the spec forces per lookup (baseline-servers.ts)
 *   bun tools/bench/http-target.ts floor-peer <bytes>
 *                                                    the floor, reading the caller's socket address per request
 *   bun tools/bench/http-target.ts direct <index>    Bun.serve + index lookup + full v1 body (V1BodyCache), no framework
 *                                                    (a diagnostic: how much of the gap is the work itself)
 *   bun tools/bench/http-target.ts bare-reuse|floor-reuse <bytes> <threads>
 *                                                    bare or floor from that many threads on one port (reusePort)
 *   bun tools/bench/http-target.ts ipintel-limits <index> <on|off> <keys.json> <n>
 *                                                    the real server, rate limits on or off (memory store), X-Forwarded-For
 *                                                    believed from loopback, n pro keys written to keys.json (a JSON array)
 *   bun tools/bench/http-target.ts ipintel-workers <index> <n>
 *                                                    the real server with IPINTEL_WORKERS=n (limits off)
 * Prints the port on stdout, then serves until killed.
 */
import { loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/host/start-server.ts';
import { baselineHandler, serveBaselineThreads } from './baseline-servers.ts';

const [mode, arg] = process.argv.slice(2);
// Benches stop targets with SIGTERM; exiting (rather than dying of the signal) lets
// `BUN_OPTIONS=--cpu-prof` write its profile (BENCHMARKS.md, "Where a request's time goes under load").
process.on('SIGTERM', () => process.exit(0));

if (mode === 'bare' || mode === 'floor' || mode === 'floor-peer') {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: baselineHandler(mode, Number(arg)) });
  console.log(server.port);
} else if (mode === 'direct') {
  const { IndexReader } = await import('../../src/index/reader.ts');
  const { FULL_COVERAGE, loadPolicy } = await import('../../src/scoring/index.ts');
  const { V1BodyCache } = await import('../../src/lookup/v1-body.ts');
  const reader = IndexReader.open(arg);
  const bodies = new V1BodyCache({ reader, policy: await loadPolicy(), coverage: FULL_COVERAGE });
  const headers = { 'content-type': 'application/json;charset=utf-8', 'cache-control': 'public, max-age=86400' };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const url = req.url;
      const hit = reader.lookup(url.slice(url.indexOf('/v1/ip/') + 7));
      if (!hit) return new Response('{}', { status: 400 });
      return new Response(bodies.body(hit, { verifiedCrawler: null, rdapOwner: null, now: Date.now() }), { headers });
    },
  });
  console.log(server.port);
} else if (mode === 'ipintel' || mode === 'ipintel-limits') {
  const limits = mode === 'ipintel-limits' ? process.argv[4] : 'off';
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    IPINTEL_INDEX: arg,
    IPINTEL_DB: ':memory:',
    IPINTEL_RATE_LIMITS: limits,
    IPINTEL_DNS_SERVERS: '127.0.0.1:9',
    IPINTEL_MEMORY_MB: process.env.IPINTEL_MEMORY_MB,
    // The limits rows name each anonymous caller in X-Forwarded-For (wrk has one source address).
    ...(mode === 'ipintel-limits' ? { IPINTEL_TRUST_PROXY: 'loopback' } : {}),
  });
  const running = await startServer(config);
  if (mode === 'ipintel-limits') {
    // Pro keys for the keyed rows, the way tools/bench/ratelimit.bench.ts makes them.
    const secrets: string[] = [];
    for (let i = 0; i < Number(process.argv[6]); i++) secrets.push((await running.services.accounts.grantKeyByEmail(`bench${i}@example.test`, 'pro', 'bench')).created.secret);
    await Bun.write(process.argv[5]!, JSON.stringify(secrets));
  }
  console.log(running.port);
} else if (mode === 'bare-reuse' || mode === 'floor-reuse') {
  // The same server as `bare` / `floor`, once per thread, every one listening on the first one's port.
  console.log(await serveBaselineThreads(mode === 'bare-reuse' ? 'bare' : 'floor', Number(arg), Number(process.argv[4] ?? 1)));
} else if (mode === 'ipintel-workers') {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { startWorkerPool } = await import('../../src/host/workers/pool.ts');
  // Workers share one database file (an in-memory one is per thread).
  const db = join(mkdtempSync(join(tmpdir(), 'ipintel-bench-workers-')), 'bench.sqlite');
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    IPINTEL_INDEX: arg,
    IPINTEL_DB: db,
    IPINTEL_RATE_LIMITS: 'off',
    IPINTEL_DNS_SERVERS: '127.0.0.1:9',
    IPINTEL_WORKERS: process.argv[4] ?? '2',
    IPINTEL_MEMORY_MB: process.env.IPINTEL_MEMORY_MB,
  });
  const pool = await startWorkerPool(config);
  console.log(pool.port);
} else {
  console.error(
    'usage: http-target.ts ipintel <index> | ipintel-limits <index> <on|off> <keys.json> <n> | bare|floor <bytes> | direct <index> | bare-reuse|floor-reuse <bytes> <threads> | ipintel-workers <index> <n>',
  );
  process.exit(2);
}
