/**
 * The feed refresher: on a schedule, fetch the catalog's feeds that are due
 * (conditionally), validate them with their parsers (src/feeds/update.ts,
 * the code `feeds update` runs), rebuild the index in a niced child process
 * when a feed changed, and swap it in with the holder's atomic reload (the
 * one /reload uses). One refresh at a time per host (a lock file beside the
 * index); processes without the lock pick up the file the holder publishes.
 */
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { IndexHolder } from '../index/holder.ts';
import { coverageOf } from '../scoring/coverage.ts';
import { EVIDENCE_KINDS } from '../index/evidence-kinds.ts';
import { localPathOf, type CatalogFeed } from './catalog.ts';
import type { DownloadLimits } from './download.ts';
import { operatorEntries, writeFeedsManifest } from './manifest-writer.ts';
import { hasGoodCopy, updateFeeds, type FeedOutcome } from './update.ts';
import type { ChildBuildRequest, ChildBuildResult } from './build-child.ts';
import { formatDuration } from './duration.ts';
import { loadRefreshState, newFeedRecord, saveRefreshState, type FeedRecord, type RefreshState } from './feed-state.ts';
import { acquireLock } from './lock.ts';
import { recordSwap } from './swap-summary.ts';

/** Who manages the served index: the server itself, the operator (left alone), the operator's manifest (refreshed), or nobody (off). */
export type FeedsMode = 'server' | 'operator' | 'manifest' | 'off';

export interface RefresherOptions {
  holder: IndexHolder;
  /** Swaps a built index in (default: this thread's holder; with workers, every worker of the host through reloadServer). */
  reload?: (path: string) => unknown;
  indexPath: string;
  /** Where the feed copies live: the feeds folder, or the operator manifest's folder. */
  feedsDir: string;
  catalog: CatalogFeed[];
  /** Cadence of feeds whose catalog entry names none. */
  refreshMs: number;
  /** The operator's manifest (mode `manifest`), else null. */
  manifest: string | null;
  /** Build with the embedded default data (false: the feeds only; tests). */
  withDefaults: boolean;
  /** Fetch `<mirror>/<path>` instead of each publisher's URL. */
  mirror: string | null;
  limits: DownloadLimits;
  /** First retry delay after a failure; doubles per consecutive failure up to the feed's cadence. */
  retryBaseMs: number;
  /** How often a process without the lock looks for a newer index file. */
  pickupMs: number;
  /** Builds the index (in a child process); `signal` aborts it when the server stops. */
  build: (req: ChildBuildRequest, signal: AbortSignal) => Promise<ChildBuildResult>;
  log: (line: string) => void;
  now: () => number;
}

/** Reasons a download failed for want of a network (not a publisher's answer). */
const UNREACHABLE = /^(download failed|timed out)/;
/** Consecutive network-level failures, with nothing fetched, after which a refresh stops trying the rest (offline). */
const OFFLINE_AFTER = 3;
/** Longest timer Node accepts. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What this process's refresher has done since start (the host's totals are the sum over processes). */
export interface RefresherCounters {
  /** Feed fetches by outcome: a new copy, a 304, a download equal to the copy, or a failure (the copy kept). */
  fetches: Record<'updated' | 'not_modified' | 'unchanged' | 'failed', number>;
  builds: Record<'ok' | 'failed', number>;
}

export class FeedRefresher {
  readonly counters: RefresherCounters = { fetches: { updated: 0, not_modified: 0, unchanged: 0, failed: 0 }, builds: { ok: 0, failed: 0 } };
  private state: RefreshState;
  private running: Promise<void> | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private pickupTimer: ReturnType<typeof setInterval> | null = null;
  private seenFile: string;
  private stopped = false;
  private readonly closing = new AbortController();
  /** When another process held the lock: not before this time again (no spinning on a held lock). */
  private lockedUntil = 0;
  readonly statePath: string;
  readonly lockPath: string;
  /** The summary of this process's last swap, being made in slices after the swap (swap-summary.ts). */
  lastSwapSummary: Promise<unknown> | null = null;

  constructor(readonly opts: RefresherOptions) {
    this.statePath = `${opts.indexPath}.feeds-state.json`;
    this.lockPath = `${opts.indexPath}.feeds.lock`;
    this.state = loadRefreshState(this.statePath);
    this.seenFile = fileKey(opts.indexPath);
  }

  /** Cadence of one feed. */
  cadenceOf(feed: CatalogFeed): number {
    return feed.cadenceMs ?? this.opts.refreshMs;
  }

  /** The record of a feed (a new one when the state file does not know it). */
  recordOf(feed: CatalogFeed): FeedRecord {
    return (this.state.feeds[feed.path] ??= newFeedRecord(existsSync(localPathOf(this.opts.feedsDir, feed))));
  }

  /** The state as last read or written. */
  get snapshot(): Readonly<RefreshState> {
    return this.state;
  }

  /** Whether a refresh is under way in this process. */
  get busy(): boolean {
    return this.running !== null;
  }

  /** When the next feed is due, ms. */
  nextAttemptAt(): number {
    return Math.min(...this.opts.catalog.map((f) => this.recordOf(f).nextAttemptAt));
  }

  /** Starts the schedule (the first refresh right away when feeds are due) and the pickup of other processes' builds. */
  start(): void {
    this.schedule();
    this.pickupTimer = setInterval(() => this.pickUp(), this.opts.pickupMs);
    this.pickupTimer.unref?.();
  }

  /** Stops the timers and kills a build under way (the server is stopping); the lock is released as the refresh unwinds. */
  close(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.pickupTimer) clearInterval(this.pickupTimer);
    this.closing.abort();
  }

  /** As close(), then waits for the refresh under way to finish. */
  async stop(): Promise<void> {
    this.close();
    await this.running;
  }

  /** One refresh now (joins the one under way); resolves when it is done. */
  refresh(): Promise<void> {
    this.running ??= this.refreshLocked().finally(() => {
      this.running = null;
      this.schedule();
    });
    return this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const wait = Math.min(MAX_TIMER_MS, Math.max(0, this.nextAttemptAt() - this.opts.now(), this.lockedUntil - this.opts.now()));
    this.timer = setTimeout(() => void this.refresh(), wait);
    this.timer.unref?.();
  }

  /** Swaps in the index file when another process replaced it. */
  pickUp(): void {
    // This process's own build is swapped in by rebuild(), once it is verified.
    if (this.running) return;
    const key = fileKey(this.opts.indexPath);
    if (key === this.seenFile || key === '') return;
    this.seenFile = key;
    try {
      // Already serving it: a swap that reached every worker of the host (the file was renamed into place before this load).
      if (statSync(this.opts.indexPath).ctimeMs <= this.opts.holder.loadedAt) {
        this.state = loadRefreshState(this.statePath);
        return;
      }
      this.opts.holder.reload(this.opts.indexPath);
      this.state = loadRefreshState(this.statePath);
      this.opts.log(`feeds: picked up ${this.opts.indexPath} (built ${this.opts.holder.current.meta.builtAt})`);
    } catch (e) {
      this.opts.log(`feeds: ${this.opts.indexPath} changed but was refused, the previous index keeps serving: ${(e as Error).message}`);
    }
  }

  private async refreshLocked(): Promise<void> {
    const release = acquireLock(this.lockPath, this.opts.now());
    if (!release) {
      // Another process fetches and builds; its state file tells when to look again.
      this.state = loadRefreshState(this.statePath);
      this.lockedUntil = this.opts.now() + this.opts.retryBaseMs;
      return;
    }
    try {
      this.state = loadRefreshState(this.statePath);
      await this.fetchDue();
      if (this.state.buildPending) await this.rebuild();
      this.state.lastRefreshAt = this.opts.now();
      saveRefreshState(this.statePath, this.state);
    } catch (e) {
      this.opts.log(`feeds: refresh failed, the current index keeps serving: ${(e as Error).message}`);
    } finally {
      release();
    }
  }

  /** Fetches every due feed and records the outcomes. */
  private async fetchDue(): Promise<void> {
    const now = this.opts.now();
    const due = this.opts.catalog.filter((f) => this.recordOf(f).nextAttemptAt <= now);
    if (due.length === 0) return;
    const outcomes: FeedOutcome[] = [];
    let unreachable = 0;
    for (const feed of due) {
      if (unreachable >= OFFLINE_AFTER && outcomes.length === unreachable) {
        // Offline: the first publishers all failed at the network level; do not wait on every other one.
        outcomes.push({ feed, status: this.recordOf(feed).hasCopy ? 'kept-previous' : 'missing', rows: null, previousRows: null, bytes: null, reason: `download failed: not attempted, ${OFFLINE_AFTER} publishers unreachable` });
        continue;
      }
      const [o] = await updateFeeds({
        feedsDir: this.opts.feedsDir,
        catalog: [feed],
        mirror: this.opts.mirror,
        limits: this.opts.limits,
        log: () => {},
        validatorsOf: (f) => this.recordOf(f).validators,
      });
      if (UNREACHABLE.test(o.reason ?? '')) unreachable++;
      outcomes.push(o);
    }
    const at = this.opts.now();
    for (const o of outcomes) {
      this.record(o, at);
      const f = this.counters.fetches;
      if (o.status === 'updated') f.updated++;
      else if (o.status === 'unchanged' && o.notModified) f.not_modified++;
      else if (o.status === 'unchanged') f.unchanged++;
      else f.failed++;
    }
    this.logOutcomes(outcomes);
    if (outcomes.some((o) => o.status === 'updated')) this.state.buildPending = true;
    if (this.opts.manifest === null) {
      // The feeds folder's manifest lists every catalog feed with a good copy (and the operator's own entries).
      const present = this.opts.catalog.filter((f) => this.recordOf(f).hasCopy);
      const manifestPath = join(this.opts.feedsDir, 'feeds.json');
      // Offline with nothing fetched yet: no manifest to write and nothing to rebuild.
      if (present.length > 0 || existsSync(manifestPath)) {
        const written = writeFeedsManifest(this.opts.feedsDir, present, operatorEntries(manifestPath, this.opts.catalog));
        if (written.changed) this.state.buildPending = true;
      }
    }
    saveRefreshState(this.statePath, this.state);
  }

  /** Updates a feed's record from its outcome: success schedules the next check at its cadence, failure backs off. */
  private record(o: FeedOutcome, at: number): void {
    const r = this.recordOf(o.feed);
    const cadence = this.cadenceOf(o.feed);
    r.lastAttemptAt = at;
    r.hasCopy = hasGoodCopy(o);
    if (o.status === 'updated' || o.status === 'unchanged') {
      r.lastFetchAt = at;
      if (o.status === 'updated') r.lastChangeAt = at;
      if (o.validators) r.validators = o.validators;
      r.failures = 0;
      r.reason = null;
      r.nextAttemptAt = at + cadence;
    } else {
      r.failures++;
      r.reason = o.reason ?? o.status;
      r.nextAttemptAt = at + Math.min(cadence, this.opts.retryBaseMs * 2 ** Math.min(r.failures - 1, 20));
    }
  }

  /** One line per feed; a single line when no publisher could be reached at all (offline). */
  private logOutcomes(outcomes: FeedOutcome[]): void {
    const failed = outcomes.filter((o) => !(o.status === 'updated' || o.status === 'unchanged'));
    if (failed.length === outcomes.length && failed.every((o) => UNREACHABLE.test(o.reason ?? ''))) {
      const next = new Date(this.nextAttemptAt()).toISOString();
      this.opts.log(`feeds: no publisher reachable (${outcomes.length} feeds, e.g. ${outcomes[0].reason}); serving ${this.opts.indexPath} as it is; next attempt ${next}`);
      return;
    }
    for (const o of outcomes) {
      const rows = o.rows === null ? '' : ` ${o.rows} rows`;
      this.opts.log(`feeds: ${o.feed.path} ${o.notModified ? 'not modified' : o.status}${rows}${o.reason ? `: ${o.reason}` : ''}`);
    }
  }

  /** Builds the index in a child process and swaps it in. */
  private async rebuild(): Promise<void> {
    const { indexPath, feedsDir, manifest, withDefaults } = this.opts;
    this.opts.log(`feeds: building ${indexPath} in the background`);
    const result = await this.opts.build({ out: indexPath, feedsDir, manifest, withDefaults }, this.closing.signal);
    if (this.closing.signal.aborted) return;
    this.state.lastBuild = { at: this.opts.now(), ok: result.ok, seconds: result.seconds ?? null, peakRssBytes: result.peakRssBytes ?? null };
    this.counters.builds[result.ok ? 'ok' : 'failed']++;
    if (!result.ok) {
      this.state.buildError = result.detail;
      this.opts.log(`feeds: build failed, the current index keeps serving: ${result.detail}`);
      return;
    }
    const replaced = this.opts.holder.current;
    try {
      await (this.opts.reload ?? ((path: string) => this.opts.holder.reload(path)))(indexPath);
    } catch (e) {
      this.state.buildError = (e as Error).message;
      this.opts.log(`feeds: the new index was refused, the current one keeps serving: ${(e as Error).message}`);
      return;
    }
    this.seenFile = fileKey(indexPath);
    this.state.buildPending = false;
    this.state.buildError = null;
    const coverage = coverageOf(this.opts.holder.current.meta, this.opts.now());
    const kinds = EVIDENCE_KINDS.map((k) => `${k}=${coverage.kinds[k].state}`).join(' ');
    const took = result.seconds !== undefined ? `built in ${result.seconds} s` : 'built';
    const peak = result.peakRssBytes ? `, peak memory ${Math.round(result.peakRssBytes / 1048576)} MiB` : '';
    this.opts.log(`feeds: swapped in ${indexPath} (generation ${this.opts.holder.generation}, ${took}${peak}); coverage: ${kinds}`);
    this.lastSwapSummary = recordSwap(replaced, indexPath, { indexPath, log: this.opts.log, now: this.opts.now });
  }

  /** The catalog with the state of each feed, for the status views. */
  feeds(): Array<{ feed: CatalogFeed; record: FeedRecord; cadenceMs: number }> {
    return this.opts.catalog.map((feed) => ({ feed, record: this.recordOf(feed), cadenceMs: this.cadenceOf(feed) }));
  }

  /** The schedule in words, for the start-up line. */
  describe(): string {
    return `${this.opts.catalog.length} feeds, every ${formatDuration(this.opts.refreshMs)} (per-feed cadence where the catalog says)`;
  }
}

/** Identity of the file at a path (inode, size, mtime); '' when absent. */
function fileKey(path: string): string {
  try {
    const s = statSync(path);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return '';
  }
}

/** The catalog feeds an operator's manifest names (same file under the manifest's folder). */
export function manifestFeeds(catalog: CatalogFeed[], manifestDir: string, manifestFiles: string[]): CatalogFeed[] {
  const named = new Set(manifestFiles.map((p) => resolve(p)));
  return catalog.filter((f) => named.has(localPathOf(manifestDir, f)));
}
