/**
 * Starting the service over an existing index: the accounts database and
 * every client, then Bun.serve. Used by `ipintel serve` / `bun run start`
 * (src/cli.ts, which first builds the default index when it is missing) and
 * by tests (port 0, fixture index).
 */
import { openAccounts } from './accounts/store.ts';
import type { Config } from './config.ts';
import { createCrawlerVerifier } from './crawlers/verifier.ts';
import { resolve } from 'node:path';
import { readPullStatus } from './index/pull/pull-status-file.ts';
import { IndexHolder } from './index/holder.ts';
import { createRadarClient } from './lookup/radar.ts';
import { createRdapClient } from './rdap/index.ts';
import { loadPolicy } from './scoring/index.ts';
import { createApp } from './http/app.ts';
import { TrustedProxies } from './http/client-ip.ts';
import { HttpMetrics } from './http/metrics.ts';
import { createRateLimiterFromConfig } from './http/ratelimit/index.ts';
import { createFetchHandler } from './http/server.ts';
import type { AppServices } from './http/services.ts';

export interface RunningServer {
  url: string;
  port: number;
  services: AppServices;
  /** Stops serving and closes the services; `drain` lets requests in flight finish first (a worker at shutdown). */
  stop(drain?: boolean): Promise<void>;
}

/** How the listening socket is opened. */
export interface ListenOptions {
  /** SO_REUSEPORT: several workers listen on one port and the kernel spreads connections (src/workers/). */
  reusePort?: boolean;
}

/** Creates every service of the app from a configuration. */
export async function createServices(config: Config, overrides: Partial<AppServices> = {}): Promise<AppServices> {
  const index = overrides.index ?? IndexHolder.open(config.indexPath, overrides.now ?? Date.now);
  const policyPath = config.policyPath;
  const services: AppServices = {
    config,
    index,
    policy: overrides.policy ?? { current: await loadPolicy(policyPath ?? undefined), path: policyPath },
    crawlers: overrides.crawlers ?? createCrawlerVerifier({ dnsServers: config.dnsServers }),
    accounts: overrides.accounts ?? (await openAccounts(config.dbPath)),
    limiter: overrides.limiter !== undefined ? overrides.limiter : createRateLimiterFromConfig(config),
    rdap: overrides.rdap ?? createRdapClient({ base: config.rdapBase }),
    radar: overrides.radar ?? createRadarClient({ url: config.radarUrl, token: config.radarToken }),
    metrics: overrides.metrics ?? new HttpMetrics(index, () => services.feeds, config.pull ? () => readPullStatus(resolve(config.indexPath)) : undefined),
    trusted: overrides.trusted ?? new TrustedProxies(config.trustProxy, config.trustProxyHeader),
    now: overrides.now ?? Date.now,
    host: overrides.host,
  };
  return services;
}

/** Starts the HTTP server. */
export async function startServer(config: Config, overrides: Partial<AppServices> = {}, listen: ListenOptions = {}): Promise<RunningServer> {
  const services = await createServices(config, overrides);
  const app = createApp(services);
  const fetch = createFetchHandler(services, app);
  const server = Bun.serve({ port: config.port, hostname: config.host, fetch, idleTimeout: 30, maxRequestBodySize: 1024 * 1024, reusePort: listen.reusePort ?? false });
  // Metrics' library loads once the server answers; observations until then are buffered.
  setTimeout(() => void services.metrics.init(), 1000).unref();
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`,
    port: server.port!,
    services,
    async stop(drain = false) {
      await server.stop(!drain);
      services.limiter?.close();
      await services.accounts.close();
    },
  };
}
