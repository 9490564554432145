/**
 * Starting the feed refresher beside a running server: decides whether this
 * index is the server's to refresh (its header says the server built it, or
 * the operator named a manifest in IPINTEL_FEEDS_MANIFEST) and hands the
 * status route its view.
 */
import { dirname, resolve } from 'node:path';
import type { Config } from '../config.ts';
import type { IndexHolder } from '../index/holder.ts';
import { loadManifest } from '../../index-builder/manifest.ts';
import { isCompiledBinary } from './default-data.ts';
import { loadCatalog } from './catalog.ts';
import { buildInChild } from './build-child.ts';
import { FeedRefresher, manifestFeeds, type FeedsMode, type RefresherOptions } from './refresher.ts';
import type { FeedsStatus } from './status-view.ts';

/** Download limits of the refresher: an unreachable publisher fails within seconds, a slow big file gets minutes. */
const REFRESH_LIMITS = { timeoutMs: 10 * 60_000, maxBytes: 1024 * 1048576, connectTimeoutMs: 10_000 };
const RETRY_BASE_MS = 5 * 60_000;
const PICKUP_MS = 30_000;

/** Who manages the index at `config.indexPath` and whether the refresher runs. */
export function feedsModeOf(config: Config, holder: IndexHolder): { mode: FeedsMode; managedBy: 'server' | 'operator' } {
  const managedBy = holder.current.meta.managedBy === 'server' ? 'server' : 'operator';
  if (config.feedsRefreshMs === null) return { mode: 'off', managedBy };
  if (config.feedsManifest) return { mode: 'manifest', managedBy };
  return { mode: managedBy === 'server' ? 'server' : 'operator', managedBy };
}

/** Starts the refresher when this index is the server's to refresh; returns what the status route shows. Throws on a bad catalog or manifest. */
export function startFeedRefresher(config: Config, holder: IndexHolder, overrides: Partial<RefresherOptions> = {}): FeedsStatus {
  const { mode, managedBy } = feedsModeOf(config, holder);
  const log = overrides.log ?? ((line: string) => console.error(line));
  if (mode === 'off' || mode === 'operator') {
    if (mode === 'operator') log(`feeds: ${config.indexPath} was built by an operator; the refresher leaves it alone (IPINTEL_FEEDS_MANIFEST opts in)`);
    return { mode, managedBy, refresher: null };
  }
  let catalog = loadCatalog(config.feedsCatalog ?? undefined);
  let feedsDir = resolve(config.feedsDir);
  if (config.feedsManifest) {
    // The operator's manifest: its catalog feeds are refreshed in place, its local files stay as they are.
    feedsDir = dirname(resolve(config.feedsManifest));
    catalog = manifestFeeds(catalog, feedsDir, loadManifest(config.feedsManifest).map((s) => s.absPath));
  }
  const compiled = isCompiledBinary();
  const refresher = new FeedRefresher({
    holder,
    indexPath: resolve(config.indexPath),
    feedsDir,
    catalog,
    refreshMs: config.feedsRefreshMs!,
    manifest: config.feedsManifest ? resolve(config.feedsManifest) : null,
    withDefaults: true,
    mirror: process.env.IPINTEL_FEEDS_MIRROR?.trim() || null,
    limits: REFRESH_LIMITS,
    retryBaseMs: RETRY_BASE_MS,
    pickupMs: PICKUP_MS,
    build: (req, signal) => buildInChild(req, compiled, signal),
    log,
    now: Date.now,
    ...overrides,
  });
  log(`feeds: refreshing ${refresher.describe()} in the background (IPINTEL_FEEDS_REFRESH=off disables)`);
  refresher.start();
  return { mode, managedBy, refresher };
}
