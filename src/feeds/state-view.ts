/**
 * The feeds' state as every process and worker of a host reports it: read
 * from the state file the refresh child writes and the lock file its holder
 * touches, so a worker that never refreshes (or a second server process)
 * says the same as the holder.
 */
import { existsSync, statSync } from 'node:fs';
import { localPathOf, type CatalogFeed } from './catalog.ts';
import { loadRefreshState, newFeedRecord, statePathOf, type FeedRecord, type RefreshState } from './feed-state.ts';
import { LOCK_LAPSE_MS, readLock, type LockView } from './lock.ts';

/** What a view reads. */
export interface StateViewOptions {
  indexPath: string;
  feedsDir: string;
  catalog: CatalogFeed[];
  /** Cadence of feeds whose catalog entry names none. */
  refreshMs: number;
  /** A lock not touched for this long counts as abandoned. */
  lockLapseMs?: number;
  now: () => number;
}

/** Where the lock file of an index lives (the state file: statePathOf). */
const lockPathOf = (indexPath: string) => `${indexPath}.feeds.lock`;

/** A read-only view of the refresh state (FeedRefresher adds the refreshing). */
export class FeedStateView {
  readonly statePath: string;
  readonly lockPath: string;
  private cached: { key: string; state: RefreshState } = { key: '', state: { feeds: {}, buildPending: false, lastRefreshAt: null, buildError: null } };

  constructor(readonly view: StateViewOptions) {
    this.statePath = statePathOf(view.indexPath);
    this.lockPath = lockPathOf(view.indexPath);
  }

  get refreshMs(): number {
    return this.view.refreshMs;
  }

  now(): number {
    return this.view.now();
  }

  /** The state file as last written (re-read when it changed; the last good read when it cannot be read now). */
  get snapshot(): RefreshState {
    try {
      const s = statSync(this.statePath);
      const key = `${s.ino}:${s.size}:${s.mtimeMs}`;
      if (key !== this.cached.key) this.cached = { key, state: loadRefreshState(this.statePath) };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' && this.cached.key !== '') this.cached = { key: '', state: loadRefreshState(this.statePath) };
    }
    return this.cached.state;
  }

  /** Whether a refresh is under way on this host (a live lock). */
  get busy(): boolean {
    return this.lock()?.live ?? false;
  }

  /** The lock as the file says (null: none, or unreadable now). */
  lock(): LockView | null {
    try {
      return readLock(this.lockPath, this.view.now(), this.view.lockLapseMs ?? LOCK_LAPSE_MS);
    } catch {
      return null;
    }
  }

  /** Cadence of one feed. */
  cadenceOf(feed: CatalogFeed): number {
    return feed.cadenceMs ?? this.view.refreshMs;
  }

  /** The record of a feed (a new one when the state file does not know it). */
  recordOf(feed: CatalogFeed): FeedRecord {
    return (this.snapshot.feeds[feed.path] ??= newFeedRecord(existsSync(localPathOf(this.view.feedsDir, feed))));
  }

  /** When the next feed is due, ms. */
  nextAttemptAt(): number {
    return Math.min(...this.view.catalog.map((f) => this.recordOf(f).nextAttemptAt));
  }

  /** The catalog with the state of each feed, for the status views. */
  feeds(): Array<{ feed: CatalogFeed; record: FeedRecord; cadenceMs: number }> {
    return this.view.catalog.map((feed) => ({ feed, record: this.recordOf(feed), cadenceMs: this.cadenceOf(feed) }));
  }
}
