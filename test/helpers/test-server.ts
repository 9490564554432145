/** Starts the real server on 127.0.0.1 (port 0) over the fixture index, for HTTP tests. */
import { loadConfig } from '../../src/config.ts';
import { startServer, type RunningServer } from '../../src/host/start-server.ts';
import type { AppServices } from '../../src/http/services.ts';
import { fixtureIndexPath } from './fixture-index.ts';

/** A running server; env entries override the defaults (IPINTEL_* names of interface.md). */
export async function startTestServer(env: Record<string, string> = {}, overrides: Partial<AppServices> = {}): Promise<RunningServer> {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    IPINTEL_INDEX: await fixtureIndexPath(),
    IPINTEL_DB: ':memory:',
    IPINTEL_DNS_SERVERS: '127.0.0.1:9', // nothing answers there: crawler DNS fails fast and honestly
    IPINTEL_HISTORY: 'off', // the shared fixture's folder is no place for a history; history tests name their own
    ...env,
  });
  return startServer(config, overrides);
}
