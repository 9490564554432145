/**
 * Whose index it is, whether the refresher runs, and the read-only view of
 * the feeds' state a worker thread's status routes show: the part of
 * start.ts a serving worker needs, apart from the refresher, its child and
 * the downloader behind them, so a worker loads none of those.
 */
import { dirname, resolve } from 'node:path';
import type { Config } from '../config.ts';
import type { IndexHolder } from '../index/holder.ts';
import { loadManifest } from '../../index-builder/index.ts';
import { loadCatalog, manifestFeeds, type CatalogFeed } from './catalog.ts';
import type { FeedsMode, ServedIndex } from './refresher.ts';
import { FeedStateView } from './state-view.ts';
import type { FeedsStatus } from './status-view.ts';

/** The served index as the refresher sees it: this thread's holder, or what a worker pool says. */
export type RefreshTarget = IndexHolder | (ServedIndex & { managedBy: 'server' | 'operator' });

/** Who manages the index at `config.indexPath` and whether the refresher runs. */
export function feedsModeOf(config: Config, managedBy: 'server' | 'operator'): FeedsMode {
  if (config.feedsRefreshMs === null) return 'off';
  if (config.feedsManifest) return 'manifest';
  return managedBy === 'server' ? 'server' : 'operator';
}

/** Whose index it is, by its header. */
export function managerOf(target: RefreshTarget): 'server' | 'operator' {
  if ('managedBy' in target) return target.managedBy;
  return target.current.meta.managedBy === 'server' ? 'server' : 'operator';
}

/** The catalog and feeds folder the refresher works on (the operator's manifest narrows both). */
export function feedsOf(config: Config): { catalog: CatalogFeed[]; feedsDir: string } {
  let catalog = loadCatalog(config.feedsCatalog ?? undefined);
  let feedsDir = resolve(config.feedsDir);
  if (config.feedsManifest) {
    // The operator's manifest: its catalog feeds are refreshed in place, its local files stay as they are.
    feedsDir = dirname(resolve(config.feedsManifest));
    catalog = manifestFeeds(catalog, feedsDir, loadManifest(config.feedsManifest).map((s) => s.absPath));
  }
  return { catalog, feedsDir };
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
