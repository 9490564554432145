/**
 * What /v1/data/status says about the feeds. The public view is per
 * evidence kind (spec 4.5: detailed source readiness is internal); the
 * per-source view, with paths and failure reasons, is for the admin token.
 */
import { kindsOfSource } from '../index/evidence-kinds.ts';
import { feedFetchState, type FeedFetchState } from './feed-state.ts';
import type { FeedsMode } from './refresher.ts';
import type { FeedStateView } from './state-view.ts';
import type { Static } from '@sinclair/typebox';
import type { FeedsStatus as FeedsStatusSchema } from '../contract/service.ts';

/** The answer's `feeds` block, as declared in the contract. */
type FeedsStatusBody = Static<typeof FeedsStatusSchema>;

/** Worst first: a kind is as good as its weakest feed. */
const SEVERITY: readonly FeedFetchState[] = ['missing', 'refused', 'failed', 'stale', 'fresh'];

/** The refresher as the status route sees it (null refresher: mode off or operator). */
export interface FeedsStatus {
  mode: FeedsMode;
  /** Who manages the index file: the server built it itself, or an operator did. */
  managedBy: 'server' | 'operator';
  /** The refresher (the primary process), or a worker's read-only view of the same state files. */
  refresher: FeedStateView | null;
}

/** ISO time, or null for none (an empty catalog has no next attempt: Infinity). */
const iso = (ms: number | null): string | null => (ms === null || !Number.isFinite(ms) ? null : new Date(ms).toISOString());
const ageSeconds = (ms: number | null, now: number): number | null => (ms === null ? null : Math.max(0, Math.round((now - ms) / 1000)));

/** The public feeds block: mode, schedule and per-kind fetch state (no paths, no publishers). */
export function publicFeedsView(s: FeedsStatus, now: number): FeedsStatusBody {
  const r = s.refresher;
  // Off, or an operator's own index the refresher leaves alone: nothing is fetched, so no kind has a fetch state.
  if (!r) return { managed_by: s.managedBy, refresh: s.mode === 'off' ? 'off' : 'operator-managed', kinds: {} };
  const kinds: FeedsStatusBody['kinds'] = {};
  for (const { feed, record, cadenceMs } of r.feeds()) {
    const state = feedFetchState(record, cadenceMs, now);
    for (const kind of kindsOfSource(feed.type, feed.options.category)) {
      const k = (kinds[kind] ??= { state: 'fresh', sources: 0, fresh: 0, stale: 0, missing: 0, refused: 0, failed: 0, last_fetch_at: null, last_change_at: null, age_seconds: null });
      k.sources++;
      k[state]++;
      if (SEVERITY.indexOf(state) < SEVERITY.indexOf(k.state)) k.state = state;
      if (record.lastFetchAt !== null && (k.last_fetch_at === null || record.lastFetchAt > Date.parse(k.last_fetch_at))) {
        k.last_fetch_at = iso(record.lastFetchAt);
        k.age_seconds = ageSeconds(record.lastFetchAt, now);
      }
      if (record.lastChangeAt !== null && (k.last_change_at === null || record.lastChangeAt > Date.parse(k.last_change_at))) k.last_change_at = iso(record.lastChangeAt);
    }
  }
  const snap = r.snapshot;
  return {
    managed_by: s.mode === 'manifest' ? 'operator-manifest' : s.managedBy,
    refresh: r.busy ? 'running' : 'scheduled',
    refresh_seconds: Math.round(r.refreshMs / 1000),
    last_refresh_at: iso(snap.lastRefreshAt),
    next_attempt_at: iso(r.nextAttemptAt()),
    build: snap.buildError || (snap.lastRun && snap.lastRun.outcome !== 'ok') ? 'failed' : snap.buildPending ? 'pending' : 'current',
    kinds,
  };
}

/** The admin's view of the lock (who refreshes and since when) and of the last refresh child. */
export function adminRefreshView(s: FeedsStatus): Pick<FeedsStatusBody, 'lock' | 'last_run'> {
  const r = s.refresher;
  if (!r) return {};
  const seen = r.lock();
  const h = seen?.holder;
  const lock = seen && h
    ? { pid: h.pid, process_started_at: iso(h.processStartedAt), this_process: h.pid === process.pid, since: iso(h.since)!, heartbeat_at: iso(seen.heartbeatAt)!, live: seen.live }
    : null;
  const run = r.snapshot.lastRun;
  const last_run = run ? { at: iso(run.at)!, outcome: run.outcome, reason: run.reason, seconds: run.seconds, peak_rss_bytes: run.peakRssBytes } : null;
  return { lock, last_run };
}

/** The admin's per-source view: each feed's path, state, dates and reason. */
export function adminFeedsView(s: FeedsStatus, now: number): NonNullable<FeedsStatusBody['sources']> {
  const r = s.refresher;
  if (!r) return [];
  return r.feeds().map(({ feed, record, cadenceMs }) => ({
    path: feed.path,
    type: feed.type,
    state: feedFetchState(record, cadenceMs, now),
    cadence_seconds: Math.round(cadenceMs / 1000),
    last_fetch_at: iso(record.lastFetchAt),
    last_change_at: iso(record.lastChangeAt),
    age_seconds: ageSeconds(record.lastFetchAt, now),
    next_attempt_at: iso(record.nextAttemptAt),
    reason: record.reason,
  }));
}
