/**
 * Operator metrics in Prometheus text (prom-client): HTTP traffic by route
 * and status, latency, lookups by family, index age and size, rate-limit
 * rejections, the feed refresher (src/feeds/feed-metrics.ts). One registry per app so tests can run several apps.
 *
 * The request path only adds to plain counters here (a Map entry per
 * route/method/status, a bucket array per route): prom-client's label
 * hashing cost more per request than the lookup route's own work. The
 * counters are handed to prom-client when /metrics is scraped, so its text
 * format is the library's. prom-client is imported with the module, at
 * start, like everything a request can need: an import on the request path
 * can fail when descriptors run out (EMFILE) and take /metrics down with it.
 * Its registry is built on the first scrape.
 */
import type { Counter, Gauge, Registry } from 'prom-client';
import { registerSwapMetrics } from '../feeds/swap-metrics.ts';
import { swapSummariesPath } from '../feeds/swap-summary.ts';
import type { IndexHolder } from '../index/holder.ts';
import { registerFeedMetrics } from '../feeds/feed-metrics.ts';
import { registerPullMetrics } from '../index/pull/pull-metrics.ts';
import type { PullStatus } from '../index/pull/pull-status-file.ts';
import { registerPublishMetrics, type PublishFigures } from '../index/publish/publish-figures.ts';
import type { FeedsStatus } from '../feeds/status-view.ts';
import { limiterMetrics } from './ratelimit/index.ts';

type Prom = typeof import('prom-client');

/**
 * The three classes the registry is built from, from their own files: the
 * package's index also loads its push gateway (node:http, https, zlib), its
 * cluster aggregator and default process metrics, in every worker at start.
 * The helpers this registry is passed to destructure only these three.
 */
const promClient = {
  Counter: require('prom-client/lib/counter') as typeof Counter,
  Gauge: require('prom-client/lib/gauge') as typeof Gauge,
  Registry: require('prom-client/lib/registry') as typeof Registry,
} as Prom;

/** Upper bounds (seconds) of the latency histogram's buckets. */
export const LATENCY_BUCKETS: readonly number[] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** Requests of one route, method and status. */
interface RequestCell {
  labels: { route: string; method: string; status: string };
  count: number;
  /** Part of count already handed to prom-client. */
  reported: number;
}

/** Latency of one route: per-bucket counts (last: above every bound), sum, count. */
interface LatencyCell {
  buckets: Float64Array;
  sum: number;
  count: number;
}

/** Counts one request in its cells. */
function record(cell: RequestCell, l: LatencyCell, seconds: number): void {
  cell.count++;
  let b = 0;
  while (b < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[b]) b++;
  l.buckets[b]++;
  l.sum += seconds;
  l.count++;
}

/** Methods that are their own label; any other method a client sends is counted as OTHER_METHOD. */
const METHOD_LABELS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);
export const OTHER_METHOD = 'OTHER';

/**
 * Bound on request series (route x method x status). Callers pass route
 * labels from the route table, so this is only reached if a caller passes
 * something unbounded: further series are folded into one overflow series
 * rather than growing the map (and the scrape) without end.
 */
export const MAX_REQUEST_SERIES = 1024;
/** Bound on latency series (one per route label), for the same reason. */
export const MAX_LATENCY_SERIES = 128;
/** The route label of observations folded by those bounds. */
export const OVERFLOW_ROUTE = 'overflow';

/** The metrics label of a request method: the standard ones as they are, anything else one label. */
export function methodLabel(method: string): string {
  return METHOD_LABELS.has(method) ? method : OTHER_METHOD;
}

/** The counters the request path adds to. */
class Counters {
  readonly requests = new Map<string, RequestCell>();
  readonly latency = new Map<string, LatencyCell>();
  readonly lookups = { ipv4: 0, ipv6: 0 };
  readonly reportedLookups = { ipv4: 0, ipv6: 0 };
  /** The series beyond the bounds (null until a bound is reached). */
  private overflowRequests: RequestCell | null = null;
  private overflowLatency: LatencyCell | null = null;

  observe(route: string, method: string, status: number, seconds: number): void {
    record(this.requestCell(route, method, status), this.latencyCell(route), seconds);
  }

  requestCell(route: string, method: string, status: number): RequestCell {
    const label = methodLabel(method);
    const key = `${route} ${label} ${status}`;
    const cell = this.requests.get(key);
    if (cell !== undefined) return cell;
    if (this.requests.size >= MAX_REQUEST_SERIES) return (this.overflowRequests ??= { labels: { route: OVERFLOW_ROUTE, method: OTHER_METHOD, status: 'other' }, count: 0, reported: 0 });
    const created = { labels: { route, method: label, status: String(status) }, count: 0, reported: 0 };
    this.requests.set(key, created);
    return created;
  }

  latencyCell(route: string): LatencyCell {
    const l = this.latency.get(route);
    if (l !== undefined) return l;
    if (this.latency.size >= MAX_LATENCY_SERIES) return (this.overflowLatency ??= newLatencyCell());
    const created = newLatencyCell();
    this.latency.set(route, created);
    return created;
  }

  /** Every request series, the overflow one included. */
  *requestCells(): Iterable<RequestCell> {
    yield* this.requests.values();
    if (this.overflowRequests) yield this.overflowRequests;
  }

  /** Every latency series by route label, the overflow one included. */
  *latencyCells(): Iterable<[string, LatencyCell]> {
    yield* this.latency;
    if (this.overflowLatency) yield [OVERFLOW_ROUTE, this.overflowLatency];
  }
}

function newLatencyCell(): LatencyCell {
  return { buckets: new Float64Array(LATENCY_BUCKETS.length + 1), sum: 0, count: 0 };
}

/** The latency histogram as a prom-client metric whose values come from the counters (same exposition as prom-client's Histogram). */
function latencyMetric(counters: Counters) {
  const name = 'ipintel_http_request_duration_seconds';
  return {
    name,
    help: 'Time from request to response, by route pattern',
    type: 'histogram',
    aggregator: 'sum',
    get() {
      const values: Array<{ labels: Record<string, string | number>; sharedLabels?: Record<string, string>; value: number; metricName: string }> = [];
      for (const [route, l] of counters.latencyCells()) {
        const sharedLabels = { route };
        let acc = 0;
        LATENCY_BUCKETS.forEach((le, i) => {
          acc += l.buckets[i];
          values.push({ labels: { le }, sharedLabels, value: acc, metricName: `${name}_bucket` });
        });
        values.push({ labels: { le: '+Inf' }, sharedLabels, value: l.count, metricName: `${name}_bucket` });
        values.push({ labels: {}, sharedLabels, value: l.sum, metricName: `${name}_sum` });
        values.push({ labels: {}, sharedLabels, value: l.count, metricName: `${name}_count` });
      }
      return { name, help: this.help, type: this.type, values, aggregator: this.aggregator };
    },
    reset() {
      // In place: recorders hold their cells.
      for (const [, l] of counters.latencyCells()) {
        l.buckets.fill(0);
        l.sum = 0;
        l.count = 0;
      }
    },
  };
}

/** The prom-client registry over the counters, once loaded. */
class PromMetrics {
  readonly registry: Registry;

  constructor(prom: Prom, index: IndexHolder, counters: Counters, feeds: () => FeedsStatus | undefined, pull: () => PullStatus | null, publish: () => PublishFigures | null) {
    const { Counter, Gauge, Registry } = prom;
    this.registry = new Registry();
    const registers = [this.registry];
    new Counter({
      name: 'ipintel_http_requests_total',
      help: 'HTTP requests by route pattern, method and status',
      labelNames: ['route', 'method', 'status'],
      registers,
      collect() {
        for (const cell of counters.requestCells()) {
          // inc(0) still creates the series, so a route seen once stays listed.
          this.inc(cell.labels, cell.count - cell.reported);
          cell.reported = cell.count;
        }
      },
    });
    this.registry.registerMetric(latencyMetric(counters) as unknown as Parameters<Registry['registerMetric']>[0]);
    new Counter({
      name: 'ipintel_lookups_total',
      help: 'Index lookups by address family',
      labelNames: ['family'],
      registers,
      collect() {
        for (const family of ['ipv4', 'ipv6'] as const) {
          const delta = counters.lookups[family] - counters.reportedLookups[family];
          if (counters.lookups[family] > 0) this.inc({ family }, delta);
          counters.reportedLookups[family] = counters.lookups[family];
        }
      },
    });
    new Gauge({
      name: 'ipintel_index_age_seconds',
      help: 'Seconds since the loaded index was built',
      registers,
      // Summed over workers (src/host/workers/host-metrics.ts), a host reports its oldest.
      aggregator: 'max',
      collect() {
        this.set((Date.now() - Date.parse(index.current.meta.builtAt)) / 1000);
      },
    });
    new Gauge({
      name: 'ipintel_index_intervals',
      help: 'Elementary intervals in the loaded index',
      labelNames: ['family'],
      registers,
      aggregator: 'max',
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
      // A host is only as current as its slowest worker.
      aggregator: 'min',
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
    registerFeedMetrics(prom, this.registry, feeds);
    registerSwapMetrics(prom, this.registry, () => swapSummariesPath(index.describe().path));
    registerPullMetrics(prom, this.registry, pull);
    registerPublishMetrics(prom, this.registry, publish);
  }
}

/** HTTP and lookup metrics of one app. */
export class HttpMetrics {
  private readonly counters = new Counters();
  private built: PromMetrics | null = null;

  /** `feeds` gives the feed refresher's state at scrape time (absent: no feed series values). */
  constructor(
    private readonly index: IndexHolder,
    private readonly feeds: () => FeedsStatus | undefined = () => undefined,
    /** A pulling server's puller state at scrape time (null: not pulling). */
    private readonly pull: () => PullStatus | null = () => null,
    /** A publisher's figures for what it publishes, at scrape time (null: not a publisher, or nothing published). */
    private readonly publish: () => PublishFigures | null = () => null,
  ) {}

  /** Builds the registry over the counters (idempotent). */
  init(): PromMetrics {
    this.built ??= new PromMetrics(promClient, this.index, this.counters, this.feeds, this.pull, this.publish);
    return this.built;
  }

  /** Records one finished request. */
  observe(route: string, method: string, status: number, seconds: number): void {
    this.counters.observe(route, method, status, seconds);
  }

  /** A recorder for one route, method and status, its cells found once (for the hot route). */
  observer(route: string, method: string, status: number): (seconds: number) => void {
    // Cells are made on first use so a route never answered is not listed.
    let cells: [RequestCell, LatencyCell] | null = null;
    return (seconds) => {
      cells ??= [this.counters.requestCell(route, method, status), this.counters.latencyCell(route)];
      record(cells[0], cells[1], seconds);
    };
  }

  /** Counts one lookup of a family. */
  lookup(family: 4 | 6): void {
    if (family === 4) this.counters.lookups.ipv4++;
    else this.counters.lookups.ipv6++;
  }

  /** The exposition text. */
  async text(): Promise<string> {
    return this.init().registry.metrics();
  }

  /** This thread's series as prom-client JSON, for a host's totals (src/host/workers/host-metrics.ts). */
  async json(): Promise<unknown[]> {
    return this.init().registry.getMetricsAsJSON();
  }
}
