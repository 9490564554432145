/**
 * Puts a TTL cache in front of a transport: positive answers live for
 * their record TTL, negative ones for their RFC 2308 TTL (or a short
 * default), failures are not cached. Concurrent identical questions share
 * one query.
 */
import { TtlCache } from '../../cache/ttl-cache.ts';
import { DnsFailure, type DnsAnswer, type DnsTransport, type QueryType } from './types.ts';

export interface CachingResolverOptions {
  transport: DnsTransport;
  /** Most answers held (LRU beyond that). */
  cacheSize: number;
  /** Most bytes the held answers may take (estimated; LRU beyond that). */
  cacheBytes?: number;
  /** Most questions sent and not yet answered; a question beyond fails at once (each holds a socket). */
  maxInFlight?: number;
  /** Milliseconds clock; injected for tests. */
  now: () => number;
  /** Upper bound on any cached lifetime, seconds (a huge TTL must not pin a stale proof). */
  maxTtlSeconds?: number;
  /** Lifetime of a negative answer without SOA, seconds. */
  defaultNegativeTtlSeconds?: number;
}

export interface CachingResolver {
  /** Answers from cache when live, else asks the transport; rejects with DnsFailure. */
  resolve(name: string, type: QueryType): Promise<DnsAnswer>;
  /** The live cached answer, without querying. */
  peek(name: string, type: QueryType): DnsAnswer | undefined;
}

/** Default byte bound of the answer cache. */
export const DEFAULT_DNS_CACHE_BYTES = 4 << 20;
/** Default bound on questions in flight. */
export const DEFAULT_DNS_IN_FLIGHT = 256;

/** Retained size of one cached answer: UTF-16 text of the key and values, plus per-object overhead. */
export function answerBytes(key: string, answer: DnsAnswer): number {
  let bytes = 96 + key.length * 2;
  if (answer.kind === 'records') for (const v of answer.values) bytes += 32 + v.length * 2;
  return bytes;
}

/** Builds a resolver that caches answers by their TTL. */
export function createCachingResolver(options: CachingResolverOptions): CachingResolver {
  const maxTtl = options.maxTtlSeconds ?? 86_400;
  const negativeDefault = options.defaultNegativeTtlSeconds ?? 60;
  const cache = new TtlCache<DnsAnswer>(options.cacheSize, options.now, { maxBytes: options.cacheBytes ?? DEFAULT_DNS_CACHE_BYTES, sizeOf: answerBytes });
  const maxInFlight = options.maxInFlight ?? DEFAULT_DNS_IN_FLIGHT;
  const inFlight = new Map<string, Promise<DnsAnswer>>();
  const keyOf = (name: string, type: QueryType) => `${type} ${name.toLowerCase()}`;

  const lifetimeSeconds = (answer: DnsAnswer): number =>
    Math.min(maxTtl, answer.kind === 'records' ? answer.ttl : (answer.ttl ?? negativeDefault));

  return {
    peek: (name, type) => cache.get(keyOf(name, type)),
    resolve(name, type) {
      const key = keyOf(name, type);
      const cached = cache.get(key);
      if (cached) return Promise.resolve(cached);
      const pending = inFlight.get(key);
      if (pending) return pending;
      if (inFlight.size >= maxInFlight) return Promise.reject(new DnsFailure('server_failure', `${maxInFlight} DNS questions already in flight`));
      const query = options.transport
        .query(name, type)
        .then((answer) => {
          cache.set(key, answer, lifetimeSeconds(answer) * 1000);
          return answer;
        })
        .finally(() => inFlight.delete(key));
      inFlight.set(key, query);
      return query;
    },
  };
}
