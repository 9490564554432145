/**
 * The host's /metrics with several workers: every worker's series summed by
 * prom-client's own cluster aggregation (counters and histograms add up;
 * each gauge says how it combines, src/http/http-metrics.ts), plus the pool's own
 * series (workers serving, crashes).
 */
import * as prom from 'prom-client';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';

/** Sums the workers' series (prom-client JSON each) and adds the pool's; Prometheus text. */
export async function hostMetricsText(perWorker: unknown[][], pool: { workers: number; serving: number; crashes: number }): Promise<string> {
  const registry = prom.AggregatorRegistry.aggregate(perWorker as MetricObjectWithValues<MetricValue<string>>[][]);
  new prom.Gauge({ name: 'ipintel_workers', help: 'Serving workers configured (IPINTEL_WORKERS)', registers: [registry] }).set(pool.workers);
  new prom.Gauge({ name: 'ipintel_workers_serving', help: 'Workers serving right now (one being restarted is not)', registers: [registry] }).set(pool.serving);
  new prom.Counter({ name: 'ipintel_worker_crashes_total', help: 'Workers that exited unasked and were restarted', registers: [registry] }).inc(pool.crashes);
  return registry.metrics();
}
