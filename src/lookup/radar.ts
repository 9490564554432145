/**
 * Optional third-party ASN enrichment (`radar` of spec 2.5) from
 * IPINTEL_RADAR_URL with the operator's IPINTEL_RADAR_TOKEN. The URL may
 * contain `{asn}`; otherwise the number is appended as a path segment.
 *
 * Every upstream call spends the operator's quota, so: answers and failures
 * are cached by TTL in a cache bounded by entries and bytes; a caller may
 * cause only a few uncached calls a minute (`budget`, keyed by its
 * rate-limit bucket); a body over `maxBodyBytes` is a failure, read no
 * further; redirects are not followed, so the token only ever goes to the
 * configured origin. With several workers one client serves the host (in the
 * primary, src/host/workers/pool.ts), so its cache and budgets are the host's.
 */
import { TtlCache } from '../cache/ttl-cache.ts';
import { readCappedBytes } from '../file-io/read-capped.ts';
import { RADAR_DEFAULTS } from './radar-defaults.ts';

export interface RadarClient {
  /** Enrichment for an ASN, or null when unset, failing, slow, or past `caller`'s budget of uncached calls. */
  lookup(asn: number, caller: string): Promise<unknown | null>;
}


export interface RadarOptions {
  url: string | null;
  token: string | null;
  timeoutMs?: number;
  ttlMs?: number;
  failureTtlMs?: number;
  maxEntries?: number;
  /** Most bytes the cache may hold (estimated from each body's length). */
  maxBytes?: number;
  /** Largest upstream body read; larger is a failure. */
  maxBodyBytes?: number;
  /** Takes one uncached call from a caller's budget; false: the call is not made. Absent: unlimited. */
  budget?: (caller: string) => boolean;
  now?: () => number;
  fetch?: typeof fetch;
}

interface Cached {
  value: unknown | null;
  bytes: number;
}

const NULL_CLIENT: RadarClient = { lookup: async () => null };

/** A client for the configured endpoint (always null when `url` is null). */
export function createRadarClient(opts: RadarOptions): RadarClient {
  const { url, token } = opts;
  if (!url) return NULL_CLIENT;
  const timeoutMs = opts.timeoutMs ?? RADAR_DEFAULTS.timeoutMs;
  const ttl = opts.ttlMs ?? RADAR_DEFAULTS.ttlMs;
  const failureTtl = opts.failureTtlMs ?? RADAR_DEFAULTS.failureTtlMs;
  const maxBodyBytes = opts.maxBodyBytes ?? RADAR_DEFAULTS.maxBodyBytes;
  const now = opts.now ?? Date.now;
  const doFetch = opts.fetch ?? fetch;
  const budget = opts.budget ?? (() => true);
  const cache = new TtlCache<Cached>(opts.maxEntries ?? RADAR_DEFAULTS.maxEntries, now, {
    maxBytes: opts.maxBytes ?? RADAR_DEFAULTS.maxBytes,
    sizeOf: (key, entry) => 64 + key.length * 2 + entry.bytes,
  });
  const pending = new Map<number, Promise<unknown | null>>();

  /** The upstream's answer and the bytes it took; value null on any failure. */
  const fetchOne = async (asn: number): Promise<Cached> => {
    const target = url.includes('{asn}') ? url.replaceAll('{asn}', String(asn)) : `${url.replace(/\/+$/, '')}/${asn}`;
    try {
      const res = await doFetch(target, {
        headers: { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        // A redirect is an answer we do not follow: following it could carry the token to another origin.
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) {
        await res.body?.cancel().catch(() => undefined);
        return { value: null, bytes: 0 };
      }
      const bytes = await readCappedBytes(res, maxBodyBytes);
      if (bytes === null) return { value: null, bytes: 0 };
      const body = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
      // Radar-style envelopes carry the payload in `result`.
      const value = body && typeof body === 'object' && 'result' in body ? body.result : body;
      // Parsed JSON takes about twice its text in memory.
      return { value: value ?? null, bytes: value == null ? 0 : bytes.byteLength * 2 };
    } catch {
      return { value: null, bytes: 0 };
    }
  };

  return {
    async lookup(asn, caller) {
      const hit = cache.get(String(asn));
      if (hit) return hit.value;
      const joined = pending.get(asn);
      if (joined) return joined;
      // Only a call that reaches upstream is paid for; a refused one is not cached (the next caller may have budget).
      if (!budget(caller)) return null;
      const p = fetchOne(asn).then((answer) => {
        cache.set(String(asn), answer, answer.value === null ? failureTtl : ttl);
        pending.delete(asn);
        return answer.value;
      });
      pending.set(asn, p);
      return p;
    },
  };
}
