/**
 * The RDAP client: the network edge of src/rdap. Finds the registry server
 * (IANA bootstrap, or IPINTEL_RDAP_BASE), asks it with a short timeout,
 * follows a registry's cross-RIR redirects a few hops, normalizes the answer
 * and caches it (bounded LRU; failures cached briefly). It never throws and
 * never logs response content: any failure is `available: false`.
 */
import type { LookupHit } from '../index/record.ts';
import { readCappedBytes } from '../file-io/read-capped.ts';
import { TtlCache } from '../cache/ttl-cache.ts';
import { canonicalAddress } from '../net/ip.ts';
import { shippedBootstrap, type RdapBootstrap } from './bootstrap.ts';
import { normalizeRdapNetwork } from './normalize.ts';
import { publicRdap } from './redact.ts';
import { unavailableRdap, type RdapResult } from './types.ts';
import { RDAP_DEFAULTS } from './rdap-defaults.ts';

/** Why a lookup gave `available: false` (no response content, safe to count or log). */
export interface RdapFailure {
  ip: string;
  reason: 'no_server' | 'timeout' | 'network' | 'http_status' | 'redirect' | 'too_large' | 'invalid_json' | 'not_ip_network';
  /** HTTP status, for `http_status` and `redirect`. */
  status?: number;
}

/** Options of createRdapClient; every one has a default. */
export interface RdapClientOptions {
  /** IPINTEL_RDAP_BASE: when set, every query goes to `<base>ip/<ip>` (a "/" is added when missing). */
  base?: string | null;
  /** Registry table; the shipped IANA bootstrap by default. */
  bootstrap?: RdapBootstrap;
  /** Whole-lookup budget, redirects and body included. */
  timeoutMs?: number;
  /** Most addresses kept in the cache. */
  cacheSize?: number;
  /** Most characters of the cached answers' JSON text (about their bytes); a larger answer is not kept. */
  cacheMaxBytes?: number;
  /** How long an answer is reused. */
  cacheTtlMs?: number;
  /** How long a failure is reused (short: the registry may be back soon, but not hammered meanwhile). */
  negativeTtlMs?: number;
  maxRedirects?: number;
  /** Larger answers are refused (real ones are tens of kB). */
  maxBodyBytes?: number;
  fetch?: typeof fetch;
  /** Clock for cache expiry, in ms. */
  now?: () => number;
  /** Told of each failed lookup (not of cache hits). */
  onFailure?: (failure: RdapFailure) => void;
}

/** A client: one per process (it owns the cache). */
export interface RdapClient {
  /** The spec 2.3 object for an address; `available: false` on any failure, never a rejection. */
  lookup(ip: string): Promise<RdapResult>;
  /**
   * The cached answer for an address without asking the registry (for hot
   * paths), without its contacts: what shared answers may use; null when none is cached.
   */
  peek(address: string | LookupHit): RdapResult | null;
}


const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

class LookupFailure extends Error {
  constructor(
    readonly reason: RdapFailure['reason'],
    readonly status?: number,
  ) {
    super(reason);
  }
}

/** The address text to query: canonical form; IPv4 written as IPv6 becomes its IPv4 address (net/ip.ts plainAddress). */
export function rdapQueryAddress(ip: string): string | null {
  return canonicalAddress(ip.trim());
}

/** `base` with a trailing slash, so `<base>ip/<ip>` is a path below it. */
function withSlash(base: string): string {
  return base.endsWith('/') ? base : `${base}/`;
}

/** The body as text, refusing more than maxBytes (declared or streamed). */
async function readCapped(res: Response, maxBytes: number): Promise<string> {
  const bytes = await readCappedBytes(res, maxBytes);
  if (bytes === null) throw new LookupFailure('too_large');
  return new TextDecoder().decode(bytes);
}

/** Creates a client; one per process is enough (it owns the cache). */
export function createRdapClient(options: RdapClientOptions = {}): RdapClient {
  const timeoutMs = options.timeoutMs ?? RDAP_DEFAULTS.timeoutMs;
  const negativeTtlMs = options.negativeTtlMs ?? RDAP_DEFAULTS.negativeTtlMs;
  const maxRedirects = options.maxRedirects ?? RDAP_DEFAULTS.maxRedirects;
  const maxBodyBytes = options.maxBodyBytes ?? RDAP_DEFAULTS.maxBodyBytes;
  const bootstrap = options.bootstrap ?? shippedBootstrap;
  const base = options.base ? withSlash(options.base) : null;
  // A bad base is a configuration error: fail at start-up, not as silent "unavailable" forever.
  if (base !== null && !/^https?:\/\/[^/]/i.test(base)) throw new Error(`RDAP base must be an http(s) URL (got "${base}")`);
  const fetchImpl = options.fetch ?? fetch;
  const cacheTtlMs = options.cacheTtlMs ?? RDAP_DEFAULTS.cacheTtlMs;
  const cache = new TtlCache<RdapResult>(options.cacheSize ?? RDAP_DEFAULTS.cacheSize, options.now ?? (() => performance.now()), {
    // A registry decides how big an answer is (up to maxBodyBytes each): bound the bytes too, not only the count.
    maxBytes: options.cacheMaxBytes ?? RDAP_DEFAULTS.cacheMaxBytes,
    sizeOf: (_ip, result) => Math.max(1, JSON.stringify(result).length),
  });
  const inflight = new Map<string, Promise<RdapResult>>();
  // Redirects may only lead to a registry of the table, or stay on the configured mirror.
  // Made on the first redirect (the shipped table is built on its first question, not when a server starts).
  let allowed: Set<string> | null = null;
  const allowedHosts = () => (allowed ??= new Set((base ? [base] : bootstrap.baseUrls()).map((u) => new URL(u).host)));

  function firstQuery(ip: string): { url: string; registry: string | null } | null {
    if (base) return { url: `${base}ip/${ip}`, registry: bootstrap.registryForUrl(base) };
    const server = bootstrap.serverForIp(ip);
    return server ? { url: `${server.base}ip/${ip}`, registry: server.registry } : null;
  }

  async function ask(ip: string): Promise<RdapResult> {
    const first = firstQuery(ip);
    if (!first) throw new LookupFailure('no_server');
    const signal = AbortSignal.timeout(timeoutMs);
    let url = first.url;
    for (let hop = 0; ; hop++) {
      const res = await fetchImpl(url, {
        redirect: 'manual',
        signal,
        headers: { accept: 'application/rdap+json, application/json;q=0.9' },
      });
      if (REDIRECT_STATUSES.has(res.status)) {
        await res.body?.cancel();
        const location = res.headers.get('location');
        if (hop >= maxRedirects || !location) throw new LookupFailure('redirect', res.status);
        const next = new URL(location, url);
        if (!/^https?:$/.test(next.protocol) || !allowedHosts().has(next.host)) throw new LookupFailure('redirect', res.status);
        url = next.href;
        continue;
      }
      if (!res.ok) {
        await res.body?.cancel();
        throw new LookupFailure('http_status', res.status);
      }
      const body = await readCapped(res, maxBodyBytes);
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        throw new LookupFailure('invalid_json');
      }
      // After a cross-registry redirect the first server's name no longer applies.
      const hint = bootstrap.registryForUrl(url) ?? (hop === 0 ? first.registry : null);
      const result = normalizeRdapNetwork(json, hint, ip);
      if (!result.available) throw new LookupFailure('not_ip_network');
      return result;
    }
  }

  function failureOf(ip: string, e: unknown): RdapFailure {
    if (e instanceof LookupFailure) return e.status === undefined ? { ip, reason: e.reason } : { ip, reason: e.reason, status: e.status };
    if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) return { ip, reason: 'timeout' };
    return { ip, reason: 'network' };
  }

  async function askAndCache(ip: string): Promise<RdapResult> {
    try {
      const result = await ask(ip);
      cache.set(ip, result, cacheTtlMs);
      return result;
    } catch (e) {
      options.onFailure?.(failureOf(ip, e));
      const result = unavailableRdap();
      cache.set(ip, result, negativeTtlMs);
      return result;
    }
  }

  return {
    async lookup(rawIp) {
      const ip = rdapQueryAddress(rawIp);
      if (ip === null) return unavailableRdap();
      const cached = cache.get(ip);
      // Callers get their own copy: the cached object is shared across requests.
      if (cached) return structuredClone(cached);
      let pending = inflight.get(ip);
      if (!pending) {
        pending = askAndCache(ip).finally(() => inflight.delete(ip));
        inflight.set(ip, pending);
      }
      return structuredClone(await pending);
    },
    peek(address) {
      if (cache.size === 0) return null; // no RDAP answer held (the common case, asked on every lookup): no parse
      // A lookup hit is the parsed address: its canonical text is the key (IPv4 for mapped forms).
      const ip = typeof address === 'string' ? rdapQueryAddress(address) : address.ip;
      const cached = ip === null ? undefined : cache.get(ip);
      // Contacts are for the Pro include alone: a shared answer is never handed them.
      return cached ? publicRdap(cached) : null;
    },
  };
}
