/**
 * Starting the feed refresher beside a running server: decides whether this
 * index is the server's to refresh (its header says the server built it, or
 * the operator named a manifest in IPINTEL_FEEDS_MANIFEST) and hands the
 * status route its view. The primary process starts the refresher; worker
 * threads get the read-only view of the same state (feedsStatusView).
 */
import { dirname, resolve } from 'node:path';
import type { Config } from '../config.ts';
import type { IndexHolder } from '../index/holder.ts';
import { loadManifest } from '../../index-builder/index.ts';
import { isCompiledBinary } from './default-data.ts';
import { loadCatalog, type CatalogFeed } from './catalog.ts';
import { runRefreshChild } from './refresh-child.ts';
import { HEARTBEAT_MS, LOCK_LAPSE_MS } from './lock.ts';
import { FeedRefresher, manifestFeeds, type FeedsMode, type RefresherOptions, type ServedIndex } from './refresher.ts';
import { FeedStateView } from './state-view.ts';
import type { FeedsStatus } from './status-view.ts';

/** Download limits of the refresher: an unreachable publisher fails within seconds, a slow big file gets minutes. */
const REFRESH_LIMITS = { timeoutMs: 10 * 60_000, maxBytes: 1024 * 1048576, connectTimeoutMs: 10_000 };
const RETRY_BASE_MS = 5 * 60_000;
const PICKUP_MS = 30_000;
/** Time a build may take in the child, on top of each feed's download time. */
const BUILD_BUDGET_MS = 60 * 60_000;

/** The served index as the refresher sees it: this thread's holder, or what a worker pool says. */
export type RefreshTarget = IndexHolder | (ServedIndex & { managedBy: 'server' | 'operator' });

/** Who manages the index at `config.indexPath` and whether the refresher runs. */
function feedsModeOf(config: Config, managedBy: 'server' | 'operator'): FeedsMode {
  if (config.feedsRefreshMs === null) return 'off';
  if (config.feedsManifest) return 'manifest';
  return managedBy === 'server' ? 'server' : 'operator';
}

/** Whose index it is, by its header. */
function managerOf(target: RefreshTarget): 'server' | 'operator' {
  if ('managedBy' in target) return target.managedBy;
  return target.current.meta.managedBy === 'server' ? 'server' : 'operator';
}

/** One thread's holder as a swap target. */
export function holderTarget(holder: IndexHolder): ServedIndex {
  return {
    loadedAt: () => holder.loadedAt,
    swap: async (path) => {
      holder.reload(path);
      return { generation: holder.generation, builtAt: holder.current.meta.builtAt };
    },
  };
}

/** The catalog and feeds folder the refresher works on (the operator's manifest narrows both). */
function feedsOf(config: Config): { catalog: CatalogFeed[]; feedsDir: string } {
  let catalog = loadCatalog(config.feedsCatalog ?? undefined);
  let feedsDir = resolve(config.feedsDir);
  if (config.feedsManifest) {
    // The operator's manifest: its catalog feeds are refreshed in place, its local files stay as they are.
    feedsDir = dirname(resolve(config.feedsManifest));
    catalog = manifestFeeds(catalog, feedsDir, loadManifest(config.feedsManifest).map((s) => s.absPath));
  }
  return { catalog, feedsDir };
}

/** Starts the refresher when this index is the server's to refresh (the primary process only); returns what the status route shows. Throws on a bad catalog or manifest. */
export function startFeedRefresher(config: Config, target: RefreshTarget, overrides: Partial<RefresherOptions> & { timeBudgetMs?: number } = {}): FeedsStatus & { refresher: FeedRefresher | null } {
  const managedBy = managerOf(target);
  const mode = feedsModeOf(config, managedBy);
  const log = overrides.log ?? ((line: string) => console.error(line));
  if (mode === 'off' || mode === 'operator') {
    if (mode === 'operator') log(`feeds: ${config.indexPath} was built by an operator; the refresher leaves it alone (IPINTEL_FEEDS_MANIFEST opts in)`);
    return { mode, managedBy, refresher: null };
  }
  const { catalog, feedsDir } = feedsOf(config);
  const compiled = isCompiledBinary();
  const limits = overrides.limits ?? REFRESH_LIMITS;
  const memoryCapBytes = config.feedsMemoryMb * 1048576;
  // Every feed at its download bound, then a build: a round never legitimately takes longer.
  const timeBudgetMs = overrides.timeBudgetMs ?? catalog.length * (limits.timeoutMs + (limits.connectTimeoutMs ?? 0)) + BUILD_BUDGET_MS;
  const refresher = new FeedRefresher({
    served: 'managedBy' in target ? target : holderTarget(target),
    indexPath: resolve(config.indexPath),
    feedsDir,
    catalog,
    refreshMs: config.feedsRefreshMs!,
    manifest: config.feedsManifest ? resolve(config.feedsManifest) : null,
    withDefaults: true,
    mirror: config.feedsMirror,
    limits,
    retryBaseMs: RETRY_BASE_MS,
    pickupMs: PICKUP_MS,
    heartbeatMs: HEARTBEAT_MS,
    lockLapseMs: LOCK_LAPSE_MS,
    runChild: (req, signal, onEvent) => runRefreshChild(req, { compiled, memoryCapBytes, timeBudgetMs, signal, onEvent }),
    log,
    now: Date.now,
    ...overrides,
  });
  log(`feeds: refreshing ${refresher.describe()} in the background, each round in a child capped at ${config.feedsMemoryMb} MiB (IPINTEL_FEEDS_REFRESH=off disables)`);
  refresher.start();
  return { mode, managedBy, refresher };
}

/** A worker thread's view: the same state the primary's refresher keeps, read from its files; never fetches or builds. */
export function feedsStatusView(config: Config, holder: IndexHolder): FeedsStatus {
  const managedBy = managerOf(holder);
  const mode = feedsModeOf(config, managedBy);
  if (mode === 'off' || mode === 'operator') return { mode, managedBy, refresher: null };
  const { catalog, feedsDir } = feedsOf(config);
  const view = new FeedStateView({ indexPath: resolve(config.indexPath), feedsDir, catalog, refreshMs: config.feedsRefreshMs!, now: Date.now });
  return { mode, managedBy, refresher: view };
}
