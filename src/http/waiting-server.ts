/**
 * What a pulling server answers before its first verified index arrives:
 * /health 503 (not ready, so a load balancer sends nothing), /v1/data/status
 * the puller's progress, and every other request a clear 503 error. It is
 * replaced by the real server once the index is in place.
 */
import { ApiError } from '../api-error.ts';
import type { PullStatus } from '../index/pull/pull-status-file.ts';
import { errorResponse } from './error-response.ts';
import { CORS_RESPONSE_HEADERS } from './cors.ts';

/** A running waiting server. */
export interface WaitingServer {
  port: number;
  stop(): Promise<void>;
}

/** The API's CORS headers (cors.ts), so a browser reads these answers as it reads the real server's. */
const CORS = CORS_RESPONSE_HEADERS;

const NOT_READY = new ApiError('SERVICE_UNAVAILABLE', 'No index yet: waiting for the first verified index from the publisher (IPINTEL_INDEX_URL)', { what: 'index' });

/** Serves the not-ready answers on the configured port until stopped. */
export function startWaitingServer(host: string, port: number, status: () => PullStatus | null): WaitingServer {
  const server = Bun.serve({
    hostname: host,
    port,
    reusePort: true,
    fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === '/v1/data/status' && request.method === 'GET') {
        const s = status();
        const body = {
          status: 'starting',
          index: { loaded: false, source: 'pull', last_check: s?.last_check ?? null, last_change: null, next_check: s?.next_check ?? null },
        };
        return Response.json(body, { status: 503, headers: { 'cache-control': 'no-store', 'retry-after': '5', ...CORS } });
      }
      return errorResponse(NOT_READY, { 'retry-after': '5', ...CORS });
    },
    error: () => errorResponse(NOT_READY, CORS),
  });
  return {
    port: server.port ?? port,
    async stop() {
      await server.stop(true);
    },
  };
}
