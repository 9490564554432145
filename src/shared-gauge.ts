/**
 * A one-value prom-client gauge read at each scrape from state every process of the
 * host shares (a status or state file), so any worker's value is the host's.
 */
import type { Gauge, Registry } from 'prom-client';

type GaugeClass = typeof Gauge;

/** Registers a label-less gauge set from `read()` at each scrape; null, undefined or a non-finite number leaves it unset. */
export function sharedGauge(
  Gauge: GaugeClass,
  registers: Registry[],
  name: string,
  help: string,
  read: () => number | null | undefined,
  aggregator: 'max' | 'min' = 'max',
): Gauge {
  return new Gauge({
    name,
    help,
    registers,
    aggregator,
    collect() {
      const v = read();
      if (v !== null && v !== undefined && Number.isFinite(v)) this.set(v);
    },
  });
}
