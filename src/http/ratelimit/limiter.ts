/**
 * The rate limiter the HTTP app holds: token buckets in process memory, or
 * shared through Redis with an in-process fallback.
 *
 * Redis failure policy (docs/rate-limits.md): when a Redis call fails or
 * times out, the request is decided by a local bucket in this process, and
 * so is every request while Redis is down, except one probe per
 * `fallbackMs` that tries Redis again. Local buckets see only this process's
 * share of a caller's requests, so they never refuse a request the shared
 * limit would have admitted: the fleet as a whole fails open (up to N times
 * the limit for N processes) while each process stays protected. One log
 * line per state change, never per request.
 */
import { MemoryBuckets } from './memory-store.ts';
import { DEFAULT_MAX_BUCKETS } from '../../memory-budget.ts';
import { RedisBuckets, DEFAULT_REDIS_TIMEOUT_MS } from './redis-store.ts';
import { SharedBuckets, type SharedBucketsMemory } from './shared-store.ts';
import { limiterMetrics } from './limiter-metrics.ts';
import type { RateDecision } from './gcra.ts';
import { bucketKeyText, type BucketKey } from './bucket-key.ts';
import type { Tier } from '../../tiers.ts';
import type { Config } from '../../config.ts';

/** How long the limiter stays on local buckets after a Redis error before trying Redis again. */
export const DEFAULT_FALLBACK_MS = 1_000;

/** How to build a limiter (all optional: memory store, Date.now, default bounds). */
export interface RateLimiterOptions {
  /** `'memory'` (default) or a Redis URL (`redis://host:port`, `rediss://…`, `redis+unix://…`). */
  store?: string;
  /** Bound on in-process buckets (the store itself for memory, the fallback for Redis). */
  maxBuckets?: number;
  /**
   * Buckets shared by the worker threads of one host (src/host/workers/): used
   * instead of this thread's own, for the memory store and Redis's fallback,
   * so limits stay exact across workers. Its size bounds the buckets.
   */
  shared?: SharedBucketsMemory;
  /**
   * Clock in Unix ms. Defaults to Date.now for memory buckets; with Redis the
   * default is Redis's own TIME (one clock for all processes) and an injected
   * clock is sent to the script instead (tests).
   */
  now?: () => number;
  /** Bound on one Redis round trip (ms). */
  redisTimeoutMs?: number;
  /** Time on local buckets after a Redis error before probing Redis again (ms). */
  fallbackMs?: number;
  /** Called with every store error (the counters and log lines happen regardless). */
  onStoreError?: (err: unknown) => void;
  /** Where state-change lines go (default console.warn). */
  log?: (line: string) => void;
}

/** A store of buckets in this host's memory (this thread's own, or shared by its workers). */
interface LocalBuckets {
  consume(key: BucketKey, tier: Tier, now: number): RateDecision;
  readonly size: number;
}

/** What the HTTP app holds: one consume() per counted request. */
export interface RateLimiter {
  /** Which store decides: `memory`, or `redis` (with local fallback). */
  readonly store: 'memory' | 'redis';
  /** Takes one token from a bucket (bucket-key.ts limiterKeyFor). Synchronous for memory (and while Redis is bypassed), a Promise for Redis. */
  consume(bucketKey: BucketKey, tier: Tier): RateDecision | Promise<RateDecision>;
  /** Buckets held in this process (memory store or Redis fallback). */
  bucketCount(): number;
  /** Releases the Redis connection; the limiter must not be used afterwards. */
  close(): void;
}

/** Whether a store setting names Redis. */
export function isRedisUrl(store: string): boolean {
  return /^(redis|rediss|valkey|valkeys)(\+tls)?(\+unix)?:\/\//i.test(store);
}

/** Builds a rate limiter over the chosen store. */
export function createRateLimiter(options: RateLimiterOptions = {}): RateLimiter {
  const store = options.store ?? 'memory';
  const local: LocalBuckets = options.shared ? new SharedBuckets(options.shared) : new MemoryBuckets(options.maxBuckets ?? DEFAULT_MAX_BUCKETS);
  const clock = options.now ?? Date.now;
  if (store === 'memory') return memoryLimiter(local, clock);
  if (!isRedisUrl(store)) throw new Error(`rate-limit store must be "memory" or a redis:// URL (got "${store}")`);
  return redisLimiter(store, local, clock, options);
}

/** The limiter for a server configuration, or null when limiting is off (IPINTEL_RATE_LIMITS=off); `maxBuckets` bounds in-process buckets. */
export function createRateLimiterFromConfig(config: Pick<Config, 'rateLimits' | 'rateLimitStore'>, shared?: SharedBucketsMemory, maxBuckets?: number): RateLimiter | null {
  if (!config.rateLimits) return null;
  return createRateLimiter({ store: config.rateLimitStore ?? 'memory', shared, maxBuckets });
}

/** Adds a decision to the process counters and passes it on. */
function count(d: RateDecision): RateDecision {
  if (d.allowed) limiterMetrics.admitted++;
  else limiterMetrics.rejections++;
  return d;
}

/** A limiter over in-process buckets only (synchronous). */
function memoryLimiter(buckets: LocalBuckets, clock: () => number): RateLimiter {
  return {
    store: 'memory',
    consume: (key, tier) => count(buckets.consume(key, tier, clock())),
    bucketCount: () => buckets.size,
    close: () => {},
  };
}

/** A limiter over Redis, falling back to `fallback` while Redis fails (see the policy above). */
function redisLimiter(url: string, fallback: LocalBuckets, clock: () => number, options: RateLimiterOptions): RateLimiter {
  const redis = new RedisBuckets(url, options.redisTimeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS);
  const fallbackMs = options.fallbackMs ?? DEFAULT_FALLBACK_MS;
  const log = options.log ?? ((line: string) => console.warn(line));
  const injected = options.now !== undefined;
  const where = redactUrl(url);
  let degraded = false;
  let probeAt = 0;

  const decideLocally = (key: BucketKey, tier: Tier): RateDecision => {
    limiterMetrics.fallbackDecisions++;
    return count(fallback.consume(key, tier, clock()));
  };

  return {
    store: 'redis',
    consume(key, tier) {
      if (degraded) {
        const now = clock();
        if (now < probeAt) return decideLocally(key, tier);
        // This request probes Redis; the others keep deciding locally until it answers or fails.
        probeAt = now + fallbackMs;
      }
      // Redis keys stay text, as every process sharing the store names them.
      return redis.consume(bucketKeyText(key), tier, injected ? clock() : null).then(
        (d) => {
          if (degraded) {
            degraded = false;
            limiterMetrics.redisDegraded = 0;
            log(`[ratelimit] rate-limit store ${where} reachable again: shared limits restored`);
          }
          return count(d);
        },
        (err: unknown) => {
          limiterMetrics.redisErrors++;
          options.onStoreError?.(err);
          if (!degraded) {
            degraded = true;
            limiterMetrics.redisDegraded = 1;
            log(`[ratelimit] rate-limit store ${where} unreachable (${(err as Error)?.message ?? err}): deciding with per-process buckets until it answers`);
          }
          probeAt = clock() + fallbackMs;
          return decideLocally(key, tier);
        },
      );
    },
    bucketCount: () => fallback.size,
    close: () => redis.close(),
  };
}

/** The URL without a password, for log lines. */
function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
