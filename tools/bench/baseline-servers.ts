/**
 * The Bun.serve baselines of tools/bench/http.bench.ts (started through
 * http-target.ts), from one thread or from several on one port (reusePort:
 * this module is also each thread's worker script):
 *   - bare:  a fixed JSON body of the mean v1 object's size, with the
 *            cacheable lookup's two headers: what Bun alone costs.
 *   - floor: what the spec forces on every lookup request and nothing more:
 *            reads request.url and slices the address out of it, reads
 *            X-API-Key, and answers with ipintel's headers (CORS, JSON type,
 *            caching) and a fresh body string per request of the same mean
 *            size with the address spliced in.
 *   - floor-peer: the floor, plus the caller's socket address read per
 *            request (`server.requestIP`), which an anonymous rate limit
 *            cannot do without: what limits on force at least (peer-cost.bench.ts).
 */
import type { Server } from 'bun';
import { CORS_RESPONSE_HEADERS } from '../../src/http/cors.ts';

export type BaselineKind = 'bare' | 'floor' | 'floor-peer';

const PATH = '/v1/ip/';
/** Mean length of the random IPv4 addresses the bench asks for ("a.b.c.d", a and d not 0): the floor's body averages `size`. */
const MEAN_IP_LENGTH = 13;

/** The fetch handler of a baseline whose body is `size` bytes (on average). */
export function baselineHandler(kind: BaselineKind, size: number): (req: Request, server: Server<unknown>) => Response {
  if (kind === 'bare') {
    const body = JSON.stringify({ pad: 'x'.repeat(Math.max(0, size - '{"pad":""}'.length)) });
    const headers = { 'content-type': 'application/json;charset=utf-8', 'cache-control': 'public, max-age=86400' };
    return () => new Response(body, { headers });
  }
  const head = '{"ip":"';
  const tail = `","pad":"${'x'.repeat(Math.max(0, size - MEAN_IP_LENGTH - '{"ip":"","pad":""}'.length))}"}`;
  // One Headers copied by each Response, as ipintel's lookup answers do (src/http/v1-pipeline.ts).
  const headers = new Headers({ ...CORS_RESPONSE_HEADERS, 'content-type': 'application/json;charset=utf-8', 'cache-control': 'public, max-age=86400' });
  const peer = kind === 'floor-peer';
  return (req, server) => {
    // A limiter keys the caller's bucket by this address; without one it could not answer.
    if (peer && server.requestIP(req) === null) return new Response(null, { status: 400 });
    const url = req.url;
    const at = url.indexOf(PATH);
    const query = url.indexOf('?', at);
    const ip = url.slice(at + PATH.length, query < 0 ? url.length : query);
    // A key would pick the caller's tier; the floor only pays for reading it.
    if (req.headers.get('x-api-key') === '') return new Response(null, { status: 401 });
    return new Response(head + ip + tail, { headers });
  };
}

/** Serves a baseline on 127.0.0.1 from `threads` threads sharing one port (reusePort); resolves with the port. */
export async function serveBaselineThreads(kind: BaselineKind, size: number, threads: number): Promise<number> {
  const listen = (port: number) =>
    new Promise<number>((resolve) => {
      const w = new Worker(import.meta.path);
      w.onmessage = (e) => resolve(e.data as number);
      w.postMessage({ kind, size, port });
    });
  const port = await listen(0);
  for (let i = 1; i < threads; i++) await listen(port);
  return port;
}

declare const self: Worker;
if (!Bun.isMainThread) {
  self.onmessage = (e: MessageEvent<{ kind: BaselineKind; size: number; port: number }>) => {
    const { kind, size, port } = e.data;
    const server = Bun.serve({ hostname: '127.0.0.1', port, reusePort: true, fetch: baselineHandler(kind, size) });
    postMessage(server.port);
  };
}
