/**
 * Operator metrics in Prometheus text (prom-client): HTTP traffic by route
 * and status, latency, lookups by family, index age and size, rate-limit
 * rejections. One registry per app so tests can run several apps.
 *
 * prom-client is loaded after the server answers (it is a sizeable part of
 * start-up otherwise): until then observations wait in a short buffer and
 * are replayed, so none is lost.
 */
import type { Counter, Histogram, Registry } from 'prom-client';
import type { IndexHolder } from '../index/holder.ts';
import { limiterMetrics } from './ratelimit/index.ts';

type Prom = typeof import('prom-client');

/** The prom-client metrics, once loaded. */
class PromMetrics {
  readonly registry: Registry;
  readonly requests: Counter<'route' | 'method' | 'status'>;
  readonly latency: Histogram<'route'>;
  readonly lookups: Counter<'family'>;

  constructor({ Counter, Gauge, Histogram, Registry }: Prom, index: IndexHolder) {
    this.registry = new Registry();
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

}

/** Observations made before prom-client is loaded: [route, method, status, seconds] or a lookup family. */
type Pending = [string, string, number, number] | 4 | 6;

/** Above this many buffered observations prom-client is loaded at once. */
const MAX_PENDING = 10_000;

export class HttpMetrics {
  private prom: PromMetrics | null = null;
  private loading: Promise<PromMetrics> | null = null;
  private pending: Pending[] = [];

  constructor(private readonly index: IndexHolder) {}

  /** Loads prom-client and replays what was observed so far (idempotent). */
  init(): Promise<PromMetrics> {
    this.loading ??= import('prom-client').then((m) => {
      const prom = new PromMetrics(m, this.index);
      for (const p of this.pending) {
        if (p === 4 || p === 6) prom.lookups.inc({ family: p === 4 ? 'ipv4' : 'ipv6' });
        else {
          prom.requests.inc({ route: p[0], method: p[1], status: String(p[2]) });
          prom.latency.observe({ route: p[0] }, p[3]);
        }
      }
      this.pending = [];
      this.prom = prom;
      return prom;
    });
    return this.loading;
  }

  private buffer(p: Pending): void {
    this.pending.push(p);
    if (this.pending.length >= MAX_PENDING) void this.init();
  }

  /** Records one finished request. */
  observe(route: string, method: string, status: number, seconds: number): void {
    if (!this.prom) return this.buffer([route, method, status, seconds]);
    this.prom.requests.inc({ route, method, status: String(status) });
    this.prom.latency.observe({ route }, seconds);
  }

  /** Counts one lookup of a family. */
  lookup(family: 4 | 6): void {
    if (!this.prom) return this.buffer(family);
    this.prom.lookups.inc({ family: family === 4 ? 'ipv4' : 'ipv6' });
  }

  /** The exposition text. */
  async text(): Promise<string> {
    return (await this.init()).registry.metrics();
  }
}
