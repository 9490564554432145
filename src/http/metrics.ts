/**
 * Operator metrics in Prometheus text (prom-client): HTTP traffic by route
 * and status, latency, lookups by family, index age and size, rate-limit
 * rejections. One registry per app so tests can run several apps.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { IndexHolder } from '../index/holder.ts';
import { limiterMetrics } from './ratelimit/index.ts';

export class HttpMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'route' | 'method' | 'status'>;
  private readonly latency: Histogram<'route'>;
  private readonly lookups: Counter<'family'>;

  constructor(index: IndexHolder) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'ipintel_http_requests_total',
      help: 'HTTP requests by route pattern, method and status',
      labelNames: ['route', 'method', 'status'],
      registers,
    });
    this.latency = new Histogram({
      name: 'ipintel_http_request_duration_seconds',
      help: 'Time from request to response, by route pattern',
      labelNames: ['route'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    this.lookups = new Counter({ name: 'ipintel_lookups_total', help: 'Index lookups by address family', labelNames: ['family'], registers });
    new Gauge({
      name: 'ipintel_index_age_seconds',
      help: 'Seconds since the loaded index was built',
      registers,
      collect() {
        this.set((Date.now() - Date.parse(index.current.meta.builtAt)) / 1000);
      },
    });
    new Gauge({
      name: 'ipintel_index_intervals',
      help: 'Elementary intervals in the loaded index',
      labelNames: ['family'],
      registers,
      collect() {
        const c = index.current.intervalCounts;
        this.set({ family: 'ipv4' }, c.v4);
        this.set({ family: 'ipv6' }, c.v6);
      },
    });
    new Gauge({
      name: 'ipintel_index_generation',
      help: 'Index reloads since start (1 = the first load)',
      registers,
      collect() {
        this.set(index.generation);
      },
    });
    new Gauge({
      name: 'ipintel_rate_limit_rejections_total',
      help: 'Requests refused with 429 since start',
      registers,
      collect() {
        this.set(limiterMetrics.rejections);
      },
    });
    new Gauge({
      name: 'ipintel_rate_limit_store_errors_total',
      help: 'Rate-limit store (Redis) errors since start; requests were decided locally',
      registers,
      collect() {
        this.set(limiterMetrics.redisErrors);
      },
    });
  }

  /** Records one finished request. */
  observe(route: string, method: string, status: number, seconds: number): void {
    this.requests.inc({ route, method, status: String(status) });
    this.latency.observe({ route }, seconds);
  }

  /** Counts one lookup of a family. */
  lookup(family: 4 | 6): void {
    this.lookups.inc({ family: family === 4 ? 'ipv4' : 'ipv6' });
  }

  /** The exposition text. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
