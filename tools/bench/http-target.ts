/**
 * A server for tools/bench/http.bench.ts, run in its own process so the load
 * generator and each server get their own core:
 *   bun tools/bench/http-target.ts ipintel <index>   the real server (limits off)
 *   bun tools/bench/http-target.ts bare <bytes>      Bun.serve answering a fixed JSON body of that size
 *   bun tools/bench/http-target.ts direct <index>    Bun.serve + index lookup + full v1 body (V1BodyCache), no framework
 *                                                    (a diagnostic: how much of the gap is the work itself)
 *   bun tools/bench/http-target.ts bare-reuse <bytes> <threads>
 *                                                    the bare body from that many threads on one port (reusePort)
 *   bun tools/bench/http-target.ts ipintel-workers <index> <n>
 *                                                    the real server with IPINTEL_WORKERS=n (limits off)
 * Prints the port on stdout, then serves until killed.
 */
import { loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/server.ts';

const [mode, arg] = process.argv.slice(2);

if (mode === 'bare') {
  const size = Number(arg);
  // Same headers a cacheable lookup carries, so only the work behind the body differs.
  const pad = 'x'.repeat(Math.max(0, size - '{"pad":""}'.length));
  const body = JSON.stringify({ pad });
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => new Response(body, { headers: { 'content-type': 'application/json;charset=utf-8', 'cache-control': 'public, max-age=86400' } }),
  });
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
} else if (mode === 'ipintel') {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    IPINTEL_INDEX: arg,
    IPINTEL_DB: ':memory:',
    IPINTEL_RATE_LIMITS: 'off',
    IPINTEL_DNS_SERVERS: '127.0.0.1:9',
    IPINTEL_MEMORY_MB: process.env.IPINTEL_MEMORY_MB,
  });
  const running = await startServer(config);
  console.log(running.port);
} else if (mode === 'bare-reuse') {
  const threads = Number(process.argv[4] ?? 1);
  const size = Number(arg);
  // The same server as `bare`, once per thread, every one listening on the first one's port.
  const source = `
    const pad = 'x'.repeat(Math.max(0, ${size} - '{"pad":""}'.length));
    const body = JSON.stringify({ pad });
    const headers = { 'content-type': 'application/json;charset=utf-8', 'cache-control': 'public, max-age=86400' };
    self.onmessage = (e) => {
      const server = Bun.serve({ hostname: '127.0.0.1', port: e.data, reusePort: true, fetch: () => new Response(body, { headers }) });
      postMessage(server.port);
    };`;
  const url = URL.createObjectURL(new Blob([source], { type: 'application/javascript' }));
  const listen = (port: number) =>
    new Promise<number>((resolve) => {
      const w = new Worker(url);
      w.onmessage = (e) => resolve(e.data as number);
      w.postMessage(port);
    });
  const port = await listen(0);
  for (let i = 1; i < threads; i++) await listen(port);
  console.log(port);
} else if (mode === 'ipintel-workers') {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { startWorkerPool } = await import('../../src/workers/pool.ts');
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
  });
  const pool = await startWorkerPool(config);
  console.log(pool.port);
} else {
  console.error('usage: http-target.ts ipintel <index> | bare <bytes> | direct <index> | bare-reuse <bytes> <threads> | ipintel-workers <index> <n>');
  process.exit(2);
}
