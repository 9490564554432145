/**
 * A server for tools/bench/http.bench.ts, run in its own process so the load
 * generator and each server get their own core:
 *   bun tools/bench/http-target.ts ipintel <index>   the real server (limits off)
 *   bun tools/bench/http-target.ts bare <bytes>      Bun.serve answering a fixed JSON body of that size
 *   bun tools/bench/http-target.ts direct <index>    Bun.serve + index lookup + full v1 body (V1BodyCache), no framework
 *                                                    (a diagnostic: how much of the gap is the work itself)
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
  const { loadPolicy } = await import('../../src/scoring/index.ts');
  const { V1BodyCache } = await import('../../src/lookup/v1-body.ts');
  const reader = IndexReader.open(arg);
  const bodies = new V1BodyCache();
  const policy = await loadPolicy();
  const headers = { 'content-type': 'application/json;charset=utf-8', 'cache-control': 'public, max-age=86400' };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const url = req.url;
      const hit = reader.lookup(url.slice(url.indexOf('/v1/ip/') + 7));
      if (!hit) return new Response('{}', { status: 400 });
      return new Response(bodies.body(hit, { scoring: { verifiedCrawler: null }, policy, rdapOwner: null, now: Date.now() }), { headers });
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
  });
  const running = await startServer(config);
  console.log(running.port);
} else {
  console.error('usage: http-target.ts ipintel <index> | bare <bytes> | direct <index>');
  process.exit(2);
}
