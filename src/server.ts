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
import { HistoryJobs } from './index/history/jobs.ts';
import { PastIndexes } from './index/history/past-indexes.ts';
import { recordServedIndexes } from './index/history/recorder.ts';
import { OverridesHolder } from './lookup/overrides/holder.ts';
import { ServingHolder } from './lookup/serving.ts';
import { createRadarClient, RADAR_DEFAULTS, type RadarClient } from './lookup/radar.ts';
import { createRdapClient } from './rdap/index.ts';
import { loadPolicy } from './scoring/index.ts';
import { memoryBudget, type MemoryBudget } from './memory-budget.ts';
import { createApp } from './http/app.ts';
import { TrustedProxies } from './http/client-ip.ts';
import { HttpMetrics } from './http/metrics.ts';
import { createAdminFailureBudget, createCallerBudget, createRateLimiterFromConfig } from './http/ratelimit/index.ts';
import { createFetchHandler, IDLE_TIMEOUT_SECONDS } from './http/server.ts';
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
  /** Whether this thread records the indexes it serves into the history (default true; one worker of a pool does). */
  recordsHistory?: boolean;
}

/** The radar client of a configuration, its cache sized by the memory budget, each caller allowed RADAR_DEFAULTS.callsPerMinute uncached upstream calls. */
export function createRadarFromConfig(config: Pick<Config, 'radarUrl' | 'radarToken'>, memory: Pick<MemoryBudget, 'radarEntries' | 'radarBytes'>): RadarClient {
  const calls = createCallerBudget(RADAR_DEFAULTS.callsPerMinute);
  return createRadarClient({
    url: config.radarUrl,
    token: config.radarToken,
    maxEntries: memory.radarEntries,
    maxBytes: memory.radarBytes,
    budget: (caller) => calls.spend(caller).allowed,
  });
}

/** Creates every service of the app from a configuration. */
export async function createServices(config: Config, overrides: Partial<AppServices> = {}): Promise<AppServices> {
  const index = overrides.index ?? IndexHolder.open(config.indexPath, overrides.now ?? Date.now);
  const policyPath = config.policyPath;
  const budget = memoryBudget(config.memoryMb);
  const overridesHolder = overrides.overrides ?? watchedOverrides(config.overridesPath);
  const policy = overrides.policy ?? { current: await loadPolicy(policyPath ?? undefined), path: policyPath };
  const services: AppServices = {
    config,
    index,
    overrides: overridesHolder,
    policy,
    serving: overrides.serving ?? new ServingHolder(index, policy, overridesHolder, budget),
    crawlers: overrides.crawlers ?? createCrawlerVerifier({ dnsServers: config.dnsServers, cacheSize: budget.dnsEntries }),
    accounts: overrides.accounts ?? (await openAccounts(config.dbPath)),
    limiter: overrides.limiter !== undefined ? overrides.limiter : createRateLimiterFromConfig(config, undefined, budget.rateLimitBuckets),
    adminFailures: overrides.adminFailures ?? createAdminFailureBudget(),
    rdap: overrides.rdap ?? createRdapClient({ base: config.rdapBase, cacheSize: budget.rdapEntries, cacheMaxBytes: budget.rdapBytes }),
    radar: overrides.radar ?? createRadarFromConfig(config, budget),
    metrics: overrides.metrics ?? new HttpMetrics(index, () => services.feeds, config.pull ? () => readPullStatus(resolve(config.indexPath)) : undefined),
    trusted: overrides.trusted ?? new TrustedProxies(config.trustProxy, config.trustProxyHeader),
    now: overrides.now ?? Date.now,
    host: overrides.host,
  };
  if (config.history) services.history = new PastIndexes(config.history, new HistoryJobs());
  return services;
}

/** Records every index this thread serves into the history; a failure is logged and shown by /v1/data/status, and serving goes on. */
function startRecording(services: AppServices, history: PastIndexes): void {
  services.historyRecorded = recordServedIndexes(services.index, history.config, history.jobs, services.now, {
    recorded: (o) => {
      history.reportRecording(null);
      if (o === null) console.error(`history: another process is recording into ${history.config.dir}; this one did not`);
    },
    failed: (message) => {
      console.error(message);
      history.reportRecording(message);
    },
  });
}

/** The overrides file read now and watched for changes (none when no file is named). */
function watchedOverrides(path: string | null): OverridesHolder {
  const holder = OverridesHolder.open(path);
  holder.watch();
  return holder;
}

/** Starts the HTTP server. */
export async function startServer(config: Config, overrides: Partial<AppServices> = {}, listen: ListenOptions = {}): Promise<RunningServer> {
  const services = await createServices(config, overrides);
  if (services.history && listen.recordsHistory !== false) startRecording(services, services.history);
  const app = createApp(services);
  const fetch = createFetchHandler(services, app);
  const server = Bun.serve({ port: config.port, hostname: config.host, fetch, idleTimeout: IDLE_TIMEOUT_SECONDS, maxRequestBodySize: 1024 * 1024, reusePort: listen.reusePort ?? false });
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`,
    port: server.port!,
    services,
    async stop(drain = false) {
      await server.stop(!drain);
      services.limiter?.close();
      services.history?.close();
      services.overrides.close();
      await services.accounts.close();
    },
  };
}
