/**
 * Starting the service: configuration, the index (built from the embedded
 * default when missing), the accounts database and every client, then
 * Bun.serve. Used by src/main.ts and by tests (port 0, fixture index).
 */
import { existsSync } from 'node:fs';
import { openAccounts } from './accounts/store.ts';
import type { Config } from './config.ts';
import { createCrawlerVerifier } from './crawlers/verifier.ts';
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
  stop(): Promise<void>;
}

/** Builds the embedded default index at `path` when no file is there (progress on stderr). */
export async function ensureIndex(config: Config): Promise<void> {
  if (existsSync(config.indexPath)) return;
  console.error(`no index at ${config.indexPath}: building it from the embedded default sources`);
  const { buildIndex, formatSummary } = await import('../index-builder/build.ts');
  const { defaultSources } = await import('../index-builder/default-sources.ts');
  const summary = await buildIndex({ sources: defaultSources(config.feedsDir), out: config.indexPath });
  console.error(formatSummary(summary));
}

/** Creates every service of the app from a configuration. */
export async function createServices(config: Config, overrides: Partial<AppServices> = {}): Promise<AppServices> {
  const index = overrides.index ?? IndexHolder.open(config.indexPath);
  const policyPath = config.policyPath;
  return {
    config,
    index,
    policy: overrides.policy ?? { current: await loadPolicy(policyPath ?? undefined), path: policyPath },
    crawlers: overrides.crawlers ?? createCrawlerVerifier({ dnsServers: config.dnsServers }),
    accounts: overrides.accounts ?? (await openAccounts(config.dbPath)),
    limiter: overrides.limiter !== undefined ? overrides.limiter : createRateLimiterFromConfig(config),
    rdap: overrides.rdap ?? createRdapClient({ base: config.rdapBase }),
    radar: overrides.radar ?? createRadarClient({ url: config.radarUrl, token: config.radarToken }),
    metrics: overrides.metrics ?? new HttpMetrics(index),
    trusted: overrides.trusted ?? new TrustedProxies(config.trustProxy),
    now: overrides.now ?? Date.now,
  };
}

/** Starts the HTTP server. */
export async function startServer(config: Config, overrides: Partial<AppServices> = {}): Promise<RunningServer> {
  const services = await createServices(config, overrides);
  const app = createApp(services);
  const fetch = createFetchHandler(services, app);
  const server = Bun.serve({ port: config.port, hostname: config.host, fetch, idleTimeout: 30, maxRequestBodySize: 1024 * 1024 });
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`,
    port: server.port!,
    services,
    async stop() {
      await server.stop(true);
      services.limiter?.close();
      await services.accounts.close();
    },
  };
}
