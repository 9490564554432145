/**
 * What the refresher knows about each feed of its catalog: when it was last
 * fetched and changed, the publisher's validators (for conditional
 * requests), failures and the next attempt. Kept in a JSON file beside the
 * index so a restart does not refetch fresh feeds, and so every process on
 * the host reports the same state.
 */
import { readFileSync } from 'node:fs';
import { writeFileAtomic } from '../file-io/atomic-file.ts';
import { resolve } from 'node:path';
import type { Validators } from './download.ts';
import type { CopySummary } from './copy-summary.ts';
import { hasGoodCopy, type FeedOutcome } from './feed-outcome.ts';

/**
 * How a feed stands: a good recent copy, an old one, none, a last attempt
 * that failed, or a last copy that arrived and was refused by its checks (the
 * previous copy, if any, serves in both).
 */
export type FeedFetchState = 'fresh' | 'stale' | 'missing' | 'refused' | 'failed';

export interface FeedRecord {
  /** Last attempt (any outcome), ms. */
  lastAttemptAt: number | null;
  /** Last successful contact with the publisher (a good copy or a 304), ms. */
  lastFetchAt: number | null;
  /** Last time a new copy replaced the previous one, ms. */
  lastChangeAt: number | null;
  /** Consecutive failed attempts (drives the back-off). */
  failures: number;
  /** Why the last attempt failed (null after a good one). */
  reason: string | null;
  /** Whether a good copy is on disk. */
  hasCopy: boolean;
  validators: Validators | null;
  /** When the feed is due again, ms. */
  nextAttemptAt: number;
  /** The accepted copy's sha256, rows and coverage: the next copy is compared with these, never with a re-parse (absent: not known yet). */
  copy?: CopySummary | null;
  /** The last copy arrived and was refused by its checks (`reason` says why). */
  refused?: boolean;
}

export interface RefreshState {
  feeds: Record<string, FeedRecord>;
  /** A feed changed since the last good build: the index must be rebuilt. */
  buildPending: boolean;
  lastRefreshAt: number | null;
  /** Why the last build failed (null after a good one). */
  buildError: string | null;
  /** The last build (either outcome): when it ended, how long it took, its peak memory. */
  lastBuild?: { at: number; ok: boolean; seconds: number | null; peakRssBytes: number | null } | null;
  /** The last refresh child (either outcome): when it ended, why it failed, its peak memory. */
  lastRun?: RefreshRun | null;
  /** The host's totals since the state file was created (every process reports these). */
  counters?: RefreshCounters;
}

/** How a refresh child ended: done, failed (an error, a crash), or stopped at its memory cap or time budget. */
export type RunOutcome = 'ok' | 'failed' | 'memory_cap' | 'time_budget';

export interface RefreshRun {
  at: number;
  outcome: RunOutcome;
  /** Why it failed (null when ok). */
  reason: string | null;
  seconds: number;
  peakRssBytes: number | null;
}

/** Fetches, builds and refresh children by outcome. */
export interface RefreshCounters {
  /** A new copy, a 304, a download equal to the copy, a copy refused by its checks, or a failure (the copy kept on both). */
  fetches: Record<'updated' | 'not_modified' | 'unchanged' | 'refused' | 'failed', number>;
  builds: Record<'ok' | 'failed', number>;
  runs: Record<RunOutcome, number>;
}

/** The state's counters (zero where the file has none). */
export function countersOf(state: RefreshState): RefreshCounters {
  const c = state.counters;
  state.counters = {
    fetches: { updated: 0, not_modified: 0, unchanged: 0, refused: 0, failed: 0, ...c?.fetches },
    builds: { ok: 0, failed: 0, ...c?.builds },
    runs: { ok: 0, failed: 0, memory_cap: 0, time_budget: 0, ...c?.runs },
  };
  return state.counters;
}

/** A feed never attempted: due now. */
export function newFeedRecord(hasCopy: boolean): FeedRecord {
  return { lastAttemptAt: null, lastFetchAt: null, lastChangeAt: null, failures: 0, reason: null, hasCopy, validators: null, nextAttemptAt: 0 };
}

/** The state file of an index (beside it; the refresher and `feeds update` share it). */
export function statePathOf(indexPath: string): string {
  return `${resolve(indexPath)}.feeds-state.json`;
}

/** Records one fetch's outcome in a feed's record (everything but the schedule): dates, validators, the copy's summary, failure and refusal. */
export function recordOutcome(r: FeedRecord, o: FeedOutcome, at: number): void {
  r.lastAttemptAt = at;
  r.hasCopy = hasGoodCopy(o);
  r.refused = o.refused === true;
  if (o.summary) r.copy = o.summary;
  if (!r.hasCopy) r.copy = null;
  if (o.status === 'updated' || o.status === 'unchanged') {
    r.lastFetchAt = at;
    if (o.status === 'updated') r.lastChangeAt = at;
    if (o.validators) r.validators = o.validators;
    r.failures = 0;
    r.reason = null;
  } else {
    r.failures++;
    r.reason = o.reason ?? o.status;
  }
}

/** Reads the state file; a missing or garbled one starts over (every feed due). Throws on an I/O error (EMFILE, EIO): the caller keeps what it had. */
export function loadRefreshState(path: string): RefreshState {
  const empty: RefreshState = { feeds: {}, buildPending: false, lastRefreshAt: null, buildError: null };
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return empty;
    throw e;
  }
  try {
    const doc = JSON.parse(text) as Partial<RefreshState>;
    if (typeof doc !== 'object' || doc === null || typeof doc.feeds !== 'object' || doc.feeds === null) return empty;
    return { ...empty, ...doc } as RefreshState;
  } catch {
    return empty;
  }
}

/** Writes the state file atomically. */
export function saveRefreshState(path: string, state: RefreshState): void {
  writeFileAtomic(path, `${JSON.stringify(state, null, 1)}\n`);
}

/** A feed's state at `now`: a copy older than twice its cadence is stale. */
export function feedFetchState(r: FeedRecord, cadenceMs: number, now: number): FeedFetchState {
  if (r.reason !== null && r.refused) return 'refused';
  if (!r.hasCopy) return 'missing';
  if (r.reason !== null) return 'failed';
  if (r.lastFetchAt === null || now - r.lastFetchAt > 2 * cadenceMs) return 'stale';
  return 'fresh';
}
