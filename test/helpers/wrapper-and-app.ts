/**
 * A test server with its app and the request wrapper over it, so a test can
 * send one request to both (the wrapper answers some routes before the
 * framework) and compare what they answer.
 */
import { createApp } from '../../src/http/app.ts';
import { createFetchHandler } from '../../src/http/server.ts';
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from './test-server.ts';

export interface WrapperAndApp {
  server: RunningServer;
  app: ReturnType<typeof createApp>;
  handle: ReturnType<typeof createFetchHandler>;
}

/** Starts a test server (limits off unless `env` says otherwise) and builds its app and wrapper (no GC pacing). */
export async function startWrapperAndApp(env: Record<string, string> = {}): Promise<WrapperAndApp> {
  const server = await startTestServer({ IPINTEL_RATE_LIMITS: 'off', ...env });
  const app = createApp(server.services);
  return { server, app, handle: createFetchHandler(server.services, app, { tick() {} }) };
}

/** A response's headers without Date, sorted: what two answers to one request must share. */
export const headersOf = (r: Response) => [...r.headers].filter(([k]) => k !== 'date').sort();

/** A request to a path of the test origin. */
export const request = (path: string, init?: RequestInit) => new Request(`http://127.0.0.1${path}`, init);
