/**
 * Starting the service over an existing index: the accounts database and
 * every client, then Bun.serve. Used by `ipintel serve` / `bun run start`
 * (src/cli.ts, which first builds the default index when it is missing) and
 * by tests (port 0, fixture index).
 */
import { openAccounts } from '../accounts/store.ts';
import type { Config } from '../config.ts';
import { createCrawlerVerifier } from '../crawlers/verifier.ts';
import { resolve } from 'node:path';
import { readPublishFigures } from '../index/publish/publish-figures.ts';
import { readPullStatus } from '../index/pull/pull-status-file.ts';
import { IndexHolder } from '../index/holder.ts';
import { HistoryJobs } from '../index/history/jobs.ts';
import { PastIndexes } from '../index/history/past-indexes.ts';
import { recordServedIndexes } from '../index/history/recorder.ts';
import { OverridesHolder } from '../lookup/overrides/holder.ts';
import { ServingHolder } from '../lookup/serving.ts';
import { createRdapClient } from '../rdap/index.ts';
import { loadPolicy } from '../scoring/index.ts';
import { memoryBudget } from '../memory-budget.ts';
import { createApp } from '../http/app.ts';
import { TrustedProxies } from '../http/client-ip.ts';
import { HttpMetrics } from '../http/http-metrics.ts';
import { createAdminFailureBudget, createRateLimiterFromConfig } from '../http/ratelimit/index.ts';
import { createRadarFromConfig } from '../http/radar-from-config.ts';
import { createFetchHandler, IDLE_TIMEOUT_SECONDS } from '../http/server.ts';
import type { AppServices } from '../http/services.ts';

export interface RunningServer {
  url: string;
  port: number;
  services: AppServices;
  /** Stops serving and closes the services; `drain` lets requests in flight finish first (a worker at shutdown). */
  stop(drain?: boolean): Promise<void>;
}

/** How the listening socket is opened. */
export interface ListenOptions {
  /** SO_REUSEPORT: several workers listen on one port and the kernel spreads connections (src/host/workers/). */
  reusePort?: boolean;
}

/** How a server is prepared. */
export interface PrepareOptions {
  /** Whether this thread records the indexes it serves into the history (default true; one worker of a pool does). */
  recordsHistory?: boolean;
}

/** The services that need only the configuration, not the index, the overrides or the accounts. */
export type ConfigServices = Pick<AppServices, 'policy' | 'crawlers' | 'limiter' | 'adminFailures' | 'rdap' | 'radar' | 'trusted'>;

/** Opens the services that need only the configuration: a pool's worker opens them while its primary still checks the index. */
export async function createConfigServices(config: Config, overrides: Partial<AppServices> = {}): Promise<ConfigServices> {
  const policyPath = config.policyPath;
  const budget = memoryBudget(config.memoryMb);
  return {
    policy: overrides.policy ?? { current: await loadPolicy(policyPath ?? undefined), path: policyPath },
    crawlers: overrides.crawlers ?? createCrawlerVerifier({ dnsServers: config.dnsServers, cacheSize: budget.dnsEntries }),
    limiter: overrides.limiter !== undefined ? overrides.limiter : createRateLimiterFromConfig(config, undefined, budget.rateLimitBuckets),
    adminFailures: overrides.adminFailures ?? createAdminFailureBudget(),
    rdap: overrides.rdap ?? createRdapClient({ base: config.rdapBase, cacheSize: budget.rdapEntries, cacheMaxBytes: budget.rdapBytes }),
    radar: overrides.radar ?? createRadarFromConfig(config, budget),
    trusted: overrides.trusted ?? new TrustedProxies(config.trustProxy, config.trustProxyHeader),
  };
}

/** Creates every service of the app from a configuration. */
export async function createServices(config: Config, overrides: Partial<AppServices> = {}): Promise<AppServices> {
  const index = overrides.index ?? IndexHolder.open(config.indexPath, overrides.now ?? Date.now);
  const budget = memoryBudget(config.memoryMb);
  const overridesHolder = overrides.overrides ?? (await watchedOverrides(config.overridesPath, budget.overridesBytes));
  const accounts = overrides.accounts ?? (await openAccounts(config.dbPath));
  const early = await createConfigServices(config, overrides);
  const services: AppServices = {
    config,
    index,
    overrides: overridesHolder,
    ...early,
    serving: overrides.serving ?? new ServingHolder(index, early.policy, overridesHolder, budget),
    accounts,
    metrics: overrides.metrics ?? new HttpMetrics(
        index,
        () => services.feeds,
        config.pull ? () => readPullStatus(resolve(config.indexPath)) : undefined,
        config.publish ? () => readPublishFigures(resolve(config.publish!.dir)) : undefined,
      ),
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

/** Records every index `services` serves into the history, where `config` keeps one (a worker of a pool: once its index is verified). */
export function recordServedHistory(config: Config, services: AppServices): void {
  // A publisher records what it publishes, at the moment of its publish (src/host/start-publisher.ts), not what it serves.
  if (services.history && config.role !== 'publisher') startRecording(services, services.history);
}

/** The overrides file read now (off this thread) and watched for changes (none when no file is named); the table may hold `maxTableBytes`. */
async function watchedOverrides(path: string | null, maxTableBytes: number): Promise<OverridesHolder> {
  const holder = await OverridesHolder.start(path, undefined, { maxTableBytes });
  holder.watch();
  return holder;
}

/** A server with every service open and its code loaded, not yet listening. */
export interface PreparedServer {
  services: AppServices;
  /** Starts listening (on `port`, else the configured one). */
  listen(listen?: ListenOptions & { port?: number }): RunningServer;
}

/** Opens every service of `config` and builds the app, without listening (a worker prepares before any worker of its host accepts). */
export async function prepareServer(config: Config, overrides: Partial<AppServices> = {}, options: PrepareOptions = {}): Promise<PreparedServer> {
  const services = await createServices(config, overrides);
  if (options.recordsHistory !== false) recordServedHistory(config, services);
  const app = createApp(services);
  const fetch = createFetchHandler(services, app);
  return {
    services,
    listen(listen = {}) {
      const server = Bun.serve({ port: listen.port ?? config.port, hostname: config.host, fetch, idleTimeout: IDLE_TIMEOUT_SECONDS, maxRequestBodySize: 1024 * 1024, reusePort: listen.reusePort ?? false });
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
    },
  };
}

/** Starts the HTTP server. */
export async function startServer(config: Config, overrides: Partial<AppServices> = {}, listen: ListenOptions = {}): Promise<RunningServer> {
  return (await prepareServer(config, overrides)).listen(listen);
}
