/**
 * Starting the feed refresher beside a running server: decides whether this
 * index is the server's to refresh (its header says the server built it, or
 * the operator named a manifest in IPINTEL_FEEDS_MANIFEST) and hands the
 * status route its view. The primary process starts the refresher; worker
 * threads get the read-only view of the same state (worker-view.ts).
 */
import { resolve } from 'node:path';
import type { Config } from '../config.ts';
import type { IndexHolder } from '../index/holder.ts';
import { isCompiledBinary } from './compiled-binary.ts';
import { runRefreshChild } from './refresh-child.ts';
import { HEARTBEAT_MS, LOCK_LAPSE_MS } from './lock.ts';
import { FeedRefresher, type RefresherOptions, type ServedIndex } from './refresher.ts';
import { feedsModeOf, feedsOf, managerOf, type RefreshTarget } from './worker-view.ts';
import type { FeedsStatus } from './status-view.ts';

/** Download limits of the refresher: an unreachable publisher fails within seconds, a slow big file gets minutes. */
const REFRESH_LIMITS = { timeoutMs: 10 * 60_000, maxBytes: 1024 * 1048576, connectTimeoutMs: 10_000 };
const RETRY_BASE_MS = 5 * 60_000;
const PICKUP_MS = 30_000;
/** Time a build may take in the child, on top of each feed's download time. */
const BUILD_BUDGET_MS = 60 * 60_000;

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
