/**
 * The feed refresher's series on /metrics: fetches, builds and refresh
 * children by outcome, the feeds by state, the next attempt, and the last
 * build's and child's figures. All of it comes from the state file every
 * process of the host shares (the host's totals), so workers agree and a
 * host's series are any one worker's (aggregator max).
 */
import type { Registry } from 'prom-client';
import { countersOf, feedFetchState, type FeedFetchState, type RefreshCounters } from './feed-state.ts';
import type { FeedsStatus } from './status-view.ts';
import { sharedGauge } from '../shared-gauge.ts';

type Prom = typeof import('prom-client');

const STATES: readonly FeedFetchState[] = ['fresh', 'stale', 'missing', 'refused', 'failed'];

/** Registers the feed series on a registry; `feeds` is read at each scrape (undefined or no refresher: no values). */
export function registerFeedMetrics({ Counter, Gauge }: Prom, registry: Registry, feeds: () => FeedsStatus | undefined): void {
  const registers = [registry];
  const refresher = () => feeds()?.refresher ?? null;
  // A counter by outcome, read whole from the refresher's counts at each scrape.
  const byOutcome = (name: string, help: string, counts: (c: RefreshCounters) => Record<string, number>) =>
    new Counter({
      name,
      help,
      labelNames: ['result'],
      registers,
      aggregator: 'max',
      collect() {
        const r = refresher();
        if (!r) return;
        this.reset();
        for (const [result, n] of Object.entries(counts(countersOf(r.snapshot)))) this.inc({ result }, n);
      },
    });
  byOutcome(
    'ipintel_feed_fetches_total',
    'Feed fetches by outcome: updated (a new copy), not_modified (HTTP 304), unchanged (same bytes), refused (the copy failed its checks), failed (download failed); the previous copy is kept on both',
    (c) => c.fetches,
  );
  byOutcome('ipintel_feed_builds_total', 'Background index builds by outcome', (c) => c.builds);
  byOutcome(
    'ipintel_feed_refresh_runs_total',
    'Refresh children by outcome: ok, failed (an error or a crash), memory_cap (stopped at IPINTEL_FEEDS_MEMORY_MB), time_budget (stopped at its time budget)',
    (c) => c.runs,
  );
  new Gauge({
    name: 'ipintel_feed_sources',
    help: 'Catalog feeds by state (fresh, stale, missing, refused, failed)',
    labelNames: ['state'],
    registers,
    // Every worker reads the same state file: the host's count is any worker's.
    aggregator: 'max',
    collect() {
      const r = refresher();
      if (!r) return;
      const now = r.now();
      const counts = Object.fromEntries(STATES.map((s) => [s, 0])) as Record<FeedFetchState, number>;
      for (const { record, cadenceMs } of r.feeds()) counts[feedFetchState(record, cadenceMs, now)]++;
      for (const state of STATES) this.set({ state }, counts[state]);
    },
  });
  sharedGauge(Gauge, registers, 'ipintel_feed_next_attempt_timestamp_seconds', 'When the next feed is due (Unix seconds)', () => {
    const next = refresher()?.nextAttemptAt();
    return next === undefined ? null : next / 1000;
  }, 'min');
  const lastBuild = (name: string, help: string, value: (b: NonNullable<ReturnType<typeof lastBuildOf>>) => number | null) =>
    sharedGauge(Gauge, registers, name, help, () => {
      const b = lastBuildOf(refresher());
      return b ? value(b) : null;
    });
  lastBuild('ipintel_feed_last_build_timestamp_seconds', 'When the last background build ended (Unix seconds)', (b) => b.at / 1000);
  lastBuild('ipintel_feed_last_build_success', 'Whether the last background build succeeded (1) or failed (0)', (b) => (b.ok ? 1 : 0));
  lastBuild('ipintel_feed_last_build_duration_seconds', 'Wall-clock seconds of the last background build', (b) => b.seconds);
  lastBuild('ipintel_feed_last_build_peak_rss_bytes', 'Peak resident memory of the last background build', (b) => b.peakRssBytes);
  sharedGauge(Gauge, registers, 'ipintel_feed_last_run_success', 'Whether the last refresh child ended well (1) or failed or was stopped at a cap (0)', () => {
    const run = refresher()?.snapshot.lastRun;
    return run ? (run.outcome === 'ok' ? 1 : 0) : null;
  });
  sharedGauge(
    Gauge,
    registers,
    'ipintel_feed_last_run_peak_rss_bytes',
    'Peak resident memory of the last refresh child (download, checks and build)',
    () => refresher()?.snapshot.lastRun?.peakRssBytes || null,
  );
}

function lastBuildOf(r: NonNullable<FeedsStatus['refresher']> | null) {
  return r?.snapshot.lastBuild ?? null;
}
