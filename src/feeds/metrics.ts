/**
 * The feed refresher's series on /metrics: fetches and builds by outcome
 * (this process's counts; a host's workers add up), the feeds by state,
 * the next attempt, and the last build's duration and peak memory (from
 * the state file every process of the host shares, so workers agree).
 */
import type { Registry } from 'prom-client';
import { feedFetchState, type FeedFetchState } from './feed-state.ts';
import type { FeedsStatus } from './status-view.ts';

type Prom = typeof import('prom-client');

const STATES: readonly FeedFetchState[] = ['fresh', 'stale', 'missing', 'refused', 'failed'];

/** Registers the feed series on a registry; `feeds` is read at each scrape (undefined or no refresher: no values). */
export function registerFeedMetrics({ Counter, Gauge }: Prom, registry: Registry, feeds: () => FeedsStatus | undefined): void {
  const registers = [registry];
  const refresher = () => feeds()?.refresher ?? null;
  // A counter by outcome, read whole from the refresher's counts at each scrape.
  const byOutcome = (name: string, help: string, counts: (r: NonNullable<ReturnType<typeof refresher>>) => Record<string, number>) =>
    new Counter({
      name,
      help,
      labelNames: ['result'],
      registers,
      collect() {
        const r = refresher();
        if (!r) return;
        this.reset();
        for (const [result, n] of Object.entries(counts(r))) this.inc({ result }, n);
      },
    });
  byOutcome(
    'ipintel_feed_fetches_total',
    'Feed fetches by outcome: updated (a new copy), not_modified (HTTP 304), unchanged (same bytes), refused (the copy failed its checks), failed (download failed); the previous copy is kept on both',
    (r) => r.counters.fetches,
  );
  byOutcome('ipintel_feed_builds_total', 'Background index builds by outcome', (r) => r.counters.builds);
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
      const now = r.opts.now();
      const counts = Object.fromEntries(STATES.map((s) => [s, 0])) as Record<FeedFetchState, number>;
      for (const { record, cadenceMs } of r.feeds()) counts[feedFetchState(record, cadenceMs, now)]++;
      for (const state of STATES) this.set({ state }, counts[state]);
    },
  });
  new Gauge({
    name: 'ipintel_feed_next_attempt_timestamp_seconds',
    help: 'When the next feed is due (Unix seconds)',
    registers,
    aggregator: 'min',
    collect() {
      const next = refresher()?.nextAttemptAt();
      if (next !== undefined && Number.isFinite(next)) this.set(next / 1000);
    },
  });
  const lastBuild = (name: string, help: string, value: (b: NonNullable<ReturnType<typeof lastBuildOf>>) => number | null) =>
    new Gauge({
      name,
      help,
      registers,
      aggregator: 'max',
      collect() {
        const b = lastBuildOf(refresher());
        const v = b ? value(b) : null;
        if (v !== null) this.set(v);
      },
    });
  lastBuild('ipintel_feed_last_build_timestamp_seconds', 'When the last background build ended (Unix seconds)', (b) => b.at / 1000);
  lastBuild('ipintel_feed_last_build_success', 'Whether the last background build succeeded (1) or failed (0)', (b) => (b.ok ? 1 : 0));
  lastBuild('ipintel_feed_last_build_duration_seconds', 'Wall-clock seconds of the last background build', (b) => b.seconds);
  lastBuild('ipintel_feed_last_build_peak_rss_bytes', 'Peak resident memory of the last background build', (b) => b.peakRssBytes);
}

function lastBuildOf(r: NonNullable<FeedsStatus['refresher']> | null) {
  return r?.snapshot.lastBuild ?? null;
}
