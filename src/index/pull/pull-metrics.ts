/**
 * The index puller's series on /metrics, read from its status file at each
 * scrape (every worker of a host reads the same file, so they agree).
 */
import type { Registry } from 'prom-client';
import { sharedGauge } from '../../shared-gauge.ts';
import { TRANSFER_METHODS, type PollOutcome, type PullStatus } from './pull-status-file.ts';

type Prom = typeof import('prom-client');

const OUTCOMES: readonly PollOutcome[] = ['updated', 'not_modified', 'unchanged', 'failed'];
const seconds = (iso: string | null) => (iso ? Date.parse(iso) / 1000 : null);

/** Registers the pull series; `status` is read at each scrape (null: not pulling, no values). */
export function registerPullMetrics({ Gauge }: Prom, registry: Registry, status: () => PullStatus | null): void {
  const registers = [registry];
  // Gauges, not counters: the counts live in the puller's process and workers only read them.
  const byLabel = <L extends string>(name: string, help: string, label: string, values: readonly L[], read: (s: PullStatus) => Partial<Record<L, number>> | undefined) =>
    new Gauge({
      name,
      help,
      labelNames: [label],
      registers,
      aggregator: 'max',
      collect() {
        const s = status();
        if (!s) return;
        const counts = read(s);
        for (const v of values) this.set({ [label]: v }, counts?.[v] ?? 0);
      },
    });
  byLabel('ipintel_index_pull_polls', 'Index manifest polls since the puller started, by outcome (updated, not_modified, unchanged, failed)', 'result', OUTCOMES, (s) => s.polls);
  byLabel('ipintel_index_pull_downloaded_bytes', 'Bytes the puller downloaded since it started (failed attempts too), by way (delta, compressed, plain)', 'method', TRANSFER_METHODS, (s) => s.downloaded_bytes);
  byLabel('ipintel_index_pull_updates', 'New indexes swapped in since the puller started, by the way they arrived (delta, compressed, plain)', 'method', TRANSFER_METHODS, (s) => s.updates_by);
  sharedGauge(Gauge, registers, 'ipintel_index_pull_history_downloaded_bytes', "Bytes the puller downloaded of its publisher's history since it started (failed attempts too)", () => status()?.history?.downloaded_bytes ?? null);
  sharedGauge(Gauge, registers, 'ipintel_index_pull_last_downloaded_bytes', 'Bytes the last pull that swapped in a new index downloaded', () => status()?.last_transfer?.downloaded_bytes ?? null);
  const timestamp = (name: string, help: string, pick: (s: PullStatus) => string | null) =>
    sharedGauge(Gauge, registers, name, help, () => {
      const s = status();
      return s ? seconds(pick(s)) : null;
    });
  timestamp('ipintel_index_pull_last_check_timestamp_seconds', 'When the puller last polled the manifest (Unix seconds)', (s) => s.last_check);
  timestamp('ipintel_index_pull_last_change_timestamp_seconds', 'When the puller last swapped in a new index (Unix seconds)', (s) => s.last_change);
  timestamp('ipintel_index_pull_expires_timestamp_seconds', 'When the served pulled index passes IPINTEL_INDEX_MAX_AGE (Unix seconds)', (s) => s.expires_at);
  sharedGauge(Gauge, registers, 'ipintel_index_pull_expired', 'The served pulled index is past IPINTEL_INDEX_MAX_AGE (1) or not (0)', () => {
    const expires = status()?.expires_at;
    return expires ? (Date.now() > Date.parse(expires) ? 1 : 0) : null;
  });
  sharedGauge(Gauge, registers, 'ipintel_index_pull_consecutive_failures', 'Polls failed in a row (0: the last poll succeeded)', () => status()?.consecutive_failures);
}
