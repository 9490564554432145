/**
 * The feed refresher of a host: on a schedule, take the refresh lock (one
 * holder per host, kept by a heartbeat), run one round in the refresh child
 * (fetch, check and build, src/feeds/refresh-child.ts: nothing about a feed
 * runs here) and swap the built index in everywhere this server serves.
 * Only the primary process runs it; workers report the shared state
 * (src/feeds/state-view.ts). Processes without the lock pick up the file
 * the holder publishes. Every failure (the child's, or the file system's on
 * the lock, state or index paths) logs one line and backs off; the current
 * index keeps serving.
 */
import { closeSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { localPathOf, type CatalogFeed } from './catalog.ts';
import type { ChildResult } from './refresh-child.ts';
import { UNREACHABLE, type FeedOutcomeLine, type RefreshEvent, type RefreshRequest, type RoundSettings } from './refresh-round.ts';
import { formatDuration } from '../duration.ts';
import { countersOf, loadRefreshState, saveRefreshState, type RunOutcome } from './feed-state.ts';
import { acquireLock, type HeldLock } from './lock.ts';
import { FeedStateView } from './state-view.ts';
import { recordSwap } from './swap-summary.ts';
import { removeChildLeftovers } from './leftovers.ts';

/** Who manages the served index: the server itself, the operator (left alone), the operator's manifest (refreshed), or nobody (off). */
export type FeedsMode = 'server' | 'operator' | 'manifest' | 'off';

/** What this server serves, as the refresher swaps it: one thread's holder, or every worker of the host. */
export interface ServedIndex {
  /** When the index now served was loaded, ms. */
  loadedAt(): number;
  /** Loads and verifies the file at `path` and serves it; throws when it is refused (the current one keeps serving). */
  swap(path: string): Promise<{ generation: number; builtAt: string }>;
}

export interface RefresherOptions extends RoundSettings {
  served: ServedIndex;
  /** How often a process without the lock looks for a newer index file. */
  pickupMs: number;
  /** How often the lock's holder touches it, and after how long untouched it is taken over. */
  heartbeatMs: number;
  lockLapseMs: number;
  /** Runs one round in the child (src/feeds/refresh-child.ts); `signal` kills it. */
  runChild: (req: RefreshRequest, signal: AbortSignal, onEvent: (e: RefreshEvent) => void) => Promise<ChildResult>;
  log: (line: string) => void;
  now: () => number;
}

/** Longest timer Node accepts. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class FeedRefresher extends FeedStateView {
  private running: Promise<void> | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private pickupTimer: ReturnType<typeof setInterval> | null = null;
  private seenFile: string;
  private stopped = false;
  private readonly closing = new AbortController();
  /** When another process held the lock: not before this time again (no spinning on a held lock). */
  private lockedUntil = 0;
  /** Consecutive failed rounds (the child, or the file system) and when the next may start: exponential back-off. */
  private failedRounds = 0;
  private retryAt = 0;
  /** The summary of this process's last swap, being made in slices after the swap (swap-summary.ts). */
  lastSwapSummary: Promise<unknown> | null = null;

  constructor(readonly opts: RefresherOptions) {
    super(opts);
    this.seenFile = fileKey(opts.indexPath);
  }

  /** Whether a refresh is under way (here, or by another process of the host). */
  override get busy(): boolean {
    return this.running !== null || super.busy;
  }

  /** When the next round may start: the next due feed, unless a held lock or a back-off says later. */
  private nextRoundAt(): number {
    let due = Infinity;
    try {
      // A build that failed (or was never swapped in) is retried as soon as the back-off allows.
      due = this.snapshot.buildPending ? this.opts.now() : this.nextAttemptAt();
    } catch {
      // The state cannot be read now: the back-off decides.
    }
    return Math.max(Math.min(due, this.opts.now() + this.opts.refreshMs), this.lockedUntil, this.retryAt);
  }

  /** Starts the schedule (the first refresh right away when feeds are due) and the pickup of other processes' builds. */
  start(): void {
    this.schedule();
    this.pickupTimer = setInterval(() => void this.pickUp(), this.opts.pickupMs);
    this.pickupTimer.unref?.();
  }

  /** Stops the timers and kills a child under way (the server is stopping); the lock is released as the round unwinds. */
  close(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.pickupTimer) clearInterval(this.pickupTimer);
    this.closing.abort();
  }

  /** As close(), then waits for the round under way to finish. */
  async stop(): Promise<void> {
    this.close();
    await this.running;
  }

  /** One refresh now (joins the one under way); resolves when it is done, never rejects. */
  refresh(): Promise<void> {
    this.running ??= this.round()
      .catch((e) => this.backOff(`refresh failed: ${errorText(e)}`))
      .finally(() => {
        this.running = null;
        this.schedule();
      });
    return this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const wait = Math.min(MAX_TIMER_MS, Math.max(0, this.nextRoundAt() - this.opts.now()));
    this.timer = setTimeout(() => void this.refresh(), wait);
    this.timer.unref?.();
  }

  /** A failed round: one line, and the next not before an exponentially longer wait. */
  private backOff(what: string): void {
    this.failedRounds++;
    const wait = Math.min(this.opts.refreshMs, this.opts.retryBaseMs * 2 ** Math.min(this.failedRounds - 1, 20));
    this.retryAt = this.opts.now() + wait;
    const after = wait < 60_000 ? `${Math.round(wait / 100) / 10} s` : formatDuration(wait);
    this.opts.log(`feeds: ${what}; the current index keeps serving; next attempt in ${after}`);
  }

  /** Swaps in the index file when another process replaced it. */
  async pickUp(): Promise<void> {
    // This process's own build is swapped in by the round, once it is verified.
    if (this.running) return;
    const key = fileKey(this.opts.indexPath);
    if (key === this.seenFile || key === '') return;
    this.seenFile = key;
    try {
      // Already serving it (an operator's /reload of the same file, say).
      if (statSync(this.opts.indexPath).ctimeMs <= this.opts.served.loadedAt()) return;
      const swapped = await this.opts.served.swap(this.opts.indexPath);
      this.opts.log(`feeds: picked up ${this.opts.indexPath} (built ${swapped.builtAt})`);
    } catch (e) {
      this.opts.log(`feeds: ${this.opts.indexPath} changed but was refused, the previous index keeps serving: ${(e as Error).message}`);
    }
  }

  private async round(): Promise<void> {
    let lock: HeldLock | null;
    try {
      lock = acquireLock(this.lockPath, this.opts.now(), this.opts.lockLapseMs);
    } catch (e) {
      return this.backOff(`cannot take the refresh lock ${this.lockPath} (${errorText(e)})`);
    }
    if (!lock) {
      // Another process fetches and builds; its state file says when feeds are due, its published file is picked up.
      this.lockedUntil = this.opts.now() + this.opts.retryBaseMs;
      return;
    }
    const lost = new AbortController();
    const heartbeat = setInterval(() => {
      try {
        if (lock.heartbeat()) return;
        this.opts.log(`feeds: lost the refresh lock ${this.lockPath} (taken over after a lapse); stopping this round`);
      } catch (e) {
        this.opts.log(`feeds: cannot touch the refresh lock ${this.lockPath} (${errorText(e)}); stopping this round`);
      }
      clearInterval(heartbeat);
      lost.abort();
    }, this.opts.heartbeatMs);
    try {
      await this.runRound(AbortSignal.any([this.closing.signal, lost.signal]));
    } finally {
      clearInterval(heartbeat);
      lock.release();
    }
  }

  /** One round in the child, then the swap and the state's last word. */
  private async runRound(signal: AbortSignal): Promise<void> {
    const { indexPath, feedsDir, catalog, refreshMs, manifest, withDefaults, mirror, limits, retryBaseMs } = this.opts;
    const settings: RoundSettings = { indexPath, feedsDir, catalog, refreshMs, manifest, withDefaults, mirror, limits, retryBaseMs };
    const req: RefreshRequest = { ...settings, statePath: this.statePath, clockOffsetMs: this.opts.now() - Date.now() };
    let built = null as Extract<RefreshEvent, { kind: 'built' }> | null;
    // The index being replaced, opened before the child renames the new one over it: what the swap summary compares.
    let replaced: number | null = null;
    const result = await this.opts.runChild(req, signal, (e) => {
      if (e.kind === 'fetched') this.logOutcomes(e.outcomes);
      else if (e.kind === 'building') {
        this.opts.log(`feeds: building ${indexPath} in the background`);
        replaced = openQuietly(indexPath);
      } else if (e.kind === 'built') built = e;
    });
    try {
      if (result.pid !== null && result.outcome !== 'ok') {
        // A child killed mid-write leaves temp files (a temp index is as large as the index).
        removeChildLeftovers(result.pid, [indexPath, this.statePath], catalog.map((f) => dirname(localPathOf(feedsDir, f))));
      }
      if (this.closing.signal.aborted) return;
      const swap = built;
      let swapped: { generation: number } | null = null;
      let swapError: string | null = null;
      if (result.outcome === 'ok' && swap?.ok) {
        try {
          swapped = await this.opts.served.swap(indexPath);
          this.seenFile = fileKey(indexPath);
        } catch (e) {
          swapError = (e as Error).message;
        }
      }
      // One failure line per round: the child's, the build's, or the state file's (when nothing else failed).
      let failure = result.outcome !== 'ok' ? `refresh child failed: ${result.detail}` : swap && !swap.ok ? `build failed for ${indexPath}: ${swap.detail}` : null;
      // The child wrote the state; this process adds how the child ended and what the swap did.
      try {
        const state = loadRefreshState(this.statePath);
        const outcome: RunOutcome = result.outcome;
        countersOf(state).runs[outcome]++;
        state.lastRun = { at: this.opts.now(), outcome, reason: outcome === 'ok' ? null : result.detail, seconds: result.seconds, peakRssBytes: result.peakRssBytes };
        if (state.lastBuild && swap) state.lastBuild.peakRssBytes = result.peakRssBytes;
        if (swapped) {
          state.buildPending = false;
          state.buildError = null;
        } else if (swapError) state.buildError = swapError;
        if (outcome === 'ok') state.lastRefreshAt = this.opts.now();
        saveRefreshState(this.statePath, state);
      } catch (e) {
        const cannot = `cannot write the refresh state ${this.statePath} (${errorText(e)})`;
        failure = failure ? `${failure}; ${cannot}` : cannot;
      }
      if (failure) return this.backOff(failure);
      this.failedRounds = 0;
      this.retryAt = 0;
      if (swapError) return this.opts.log(`feeds: the new index was refused, the current one keeps serving: ${swapError}`);
      if (!swapped || !swap) return;
      const peak = result.peakRssBytes ? `, peak memory ${Math.round(result.peakRssBytes / 1048576)} MiB` : '';
      this.opts.log(`feeds: swapped in ${indexPath} (generation ${swapped.generation}, built in ${swap.seconds} s${peak}); coverage: ${swap.coverage ?? 'unknown'}`);
      if (replaced === null) return;
      // The summary reads the replaced file through the descriptor, and closes it when done.
      const fd = replaced;
      replaced = null;
      this.lastSwapSummary = recordSwap(`/dev/fd/${fd}`, indexPath, { indexPath, log: this.opts.log, now: this.opts.now }).finally(() => closeQuietly(fd));
    } finally {
      if (replaced !== null) closeQuietly(replaced);
    }
  }

  /** One line per feed; a single line when no publisher could be reached at all (offline). */
  private logOutcomes(outcomes: FeedOutcomeLine[]): void {
    const failed = outcomes.filter((o) => !(o.status === 'updated' || o.status === 'unchanged'));
    if (failed.length === outcomes.length && failed.every((o) => UNREACHABLE.test(o.reason ?? ''))) {
      let next = 'unknown';
      try {
        next = new Date(this.nextAttemptAt()).toISOString();
      } catch {}
      this.opts.log(`feeds: no publisher reachable (${outcomes.length} feeds, e.g. ${outcomes[0].reason}); serving ${this.opts.indexPath} as it is; next attempt ${next}`);
      return;
    }
    for (const o of outcomes) {
      const rows = o.rows === null ? '' : ` ${o.rows} rows`;
      this.opts.log(`feeds: ${o.path} ${o.notModified ? 'not modified' : o.status}${rows}${o.reason ? `: ${o.reason}` : ''}`);
    }
  }

  /** The schedule in words, for the start-up line. */
  describe(): string {
    return `${this.opts.catalog.length} feeds, every ${formatDuration(this.opts.refreshMs)} (per-feed cadence where the catalog says)`;
  }
}

/** An error's code and message, for one log line. */
function errorText(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  const message = (e as Error).message ?? String(e);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
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

/** A descriptor of the file at `path` (it keeps the file readable after a rename over it), or null when it cannot be opened. */
function openQuietly(path: string): number | null {
  try {
    return openSync(path, 'r');
  } catch {
    return null;
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {}
}
