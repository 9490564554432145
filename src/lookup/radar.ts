/**
 * Optional third-party ASN enrichment (`radar` of spec 2.5) from
 * IPINTEL_RADAR_URL: a short timeout and a small cache; any failure is null.
 * The URL may contain `{asn}`; otherwise the number is appended as a path segment.
 */

import { readCappedBytes } from '../net/read-capped.ts';

export interface RadarClient {
  /** Enrichment for an ASN, or null when unset, failing or slow. */
  lookup(asn: number): Promise<unknown | null>;
}

interface Entry {
  value: unknown | null;
  until: number;
  /** Characters of the answer's JSON text. */
  size: number;
}

/** Enrichments held by default, and their JSON text's total size. */
export const RADAR_CACHE = { entries: 10_000, bytes: 16 << 20 } as const;

/** A client for the configured endpoint (always null when `url` is null). */
export function createRadarClient(opts: {
  url: string | null;
  token: string | null;
  timeoutMs?: number;
  ttlMs?: number;
  failureTtlMs?: number;
  maxEntries?: number;
  /** Most characters of the held answers' JSON text (about their bytes); a larger answer is not kept. */
  maxBytes?: number;
  now?: () => number;
  fetch?: typeof fetch;
}): RadarClient {
  const { url, token } = opts;
  if (!url) return { lookup: async () => null };
  const timeoutMs = opts.timeoutMs ?? 1500;
  const ttl = opts.ttlMs ?? 3_600_000;
  const failureTtl = opts.failureTtlMs ?? 60_000;
  const max = opts.maxEntries ?? RADAR_CACHE.entries;
  const maxBytes = opts.maxBytes ?? RADAR_CACHE.bytes;
  let heldBytes = 0;
  const now = opts.now ?? Date.now;
  const doFetch = opts.fetch ?? fetch;
  const cache = new Map<number, Entry>();
  const pending = new Map<number, Promise<unknown | null>>();

  const fetchOne = async (asn: number): Promise<{ value: unknown | null; size: number }> => {
    const target = url.includes('{asn}') ? url.replaceAll('{asn}', String(asn)) : `${url.replace(/\/+$/, '')}/${asn}`;
    try {
      const res = await doFetch(target, {
        headers: { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) return { value: null, size: 0 };
      // Never more than the cache may hold of one answer, whatever the endpoint sends.
      const bytes = await readCappedBytes(res, Math.max(1, Math.floor(maxBytes / 16)));
      if (bytes === null) return { value: null, size: 0 };
      const text = new TextDecoder().decode(bytes);
      const body = JSON.parse(text) as Record<string, unknown>;
      // Radar-style envelopes carry the payload in `result`.
      return { value: body && typeof body === 'object' && 'result' in body ? body.result : body, size: text.length };
    } catch {
      return { value: null, size: 0 };
    }
  };

  return {
    async lookup(asn) {
      const hit = cache.get(asn);
      if (hit && hit.until > now()) return hit.value;
      let p = pending.get(asn);
      if (!p) {
        p = fetchOne(asn).then(({ value, size }) => {
          pending.delete(asn);
          if (cache.size >= max || heldBytes + size > maxBytes) {
            cache.clear();
            heldBytes = 0;
          }
          heldBytes -= cache.get(asn)?.size ?? 0;
          cache.set(asn, { value, until: now() + (value === null ? failureTtl : ttl), size });
          heldBytes += size;
          return value;
        });
        pending.set(asn, p);
      }
      return p;
    },
  };
}
