/**
 * The last swap's headline counts on /metrics, read from the summaries file
 * every process of the host shares (swap-summary.ts), again only when the
 * file changed.
 */
import { statSync } from 'node:fs';
import type { Registry } from 'prom-client';
import type { SwapSummaryBody } from '../contract/diff.ts';
import { loadSwapSummaries } from './swap-summary.ts';
import { sharedGauge } from '../shared-gauge.ts';

type Prom = typeof import('prom-client');

/** Registers the last-swap series; `path` gives the summaries file at scrape time. */
export function registerSwapMetrics({ Gauge }: Prom, registry: Registry, path: () => string): void {
  const registers = [registry];
  let seen = '';
  let last: SwapSummaryBody | null = null;
  const lastSwap = (): SwapSummaryBody | null => {
    const file = path();
    let key = '';
    try {
      const s = statSync(file);
      key = `${file}:${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      return (last = null);
    }
    if (key !== seen) {
      seen = key;
      last = loadSwapSummaries(file).at(-1) ?? null;
    }
    return last;
  };
  const bySpace = (name: string, help: string, of: (s: SwapSummaryBody) => Record<string, { ipv4_addresses: number; ipv6_64s: number } | undefined>) =>
    new Gauge({
      name,
      help,
      labelNames: ['field', 'family'],
      registers,
      // Every worker reads the same file.
      aggregator: 'max',
      collect() {
        this.reset();
        const s = lastSwap();
        if (!s) return;
        for (const [field, c] of Object.entries(of(s))) {
          if (!c) continue;
          this.set({ field, family: 'ipv4' }, c.ipv4_addresses);
          this.set({ field, family: 'ipv6_64' }, c.ipv6_64s);
        }
      },
    });
  bySpace('ipintel_last_swap_changed', 'Address space the last index swap changed, per field group (IPv4 addresses, IPv6 /64s)', (s) => s.changed);
  bySpace('ipintel_last_swap_flagged', 'Address space the last swap newly flagged, per classification flag', (s) => s.flagged);
  bySpace('ipintel_last_swap_unflagged', 'Address space the last swap unflagged, per classification flag', (s) => s.unflagged);
  sharedGauge(
    Gauge,
    registers,
    'ipintel_last_swap_flapping_ranges',
    'Ranges whose country or a flag went back and forth across the kept swaps, as of the last swap',
    () => lastSwap()?.flapping.length,
  );
  sharedGauge(Gauge, registers, 'ipintel_last_swap_timestamp_seconds', 'When the last index swap was summarised (Unix seconds)', () => {
    const s = lastSwap();
    return s ? Date.parse(s.swapped_at) / 1000 : null;
  });
}
