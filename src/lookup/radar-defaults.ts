/** The radar client's default bounds, on their own: the memory budget reads them without loading the client. */

/** Defaults of the client's bounds. */
export const RADAR_DEFAULTS = {
  timeoutMs: 1500,
  ttlMs: 3_600_000,
  failureTtlMs: 60_000,
  maxEntries: 10_000,
  maxBytes: 8 << 20,
  maxBodyBytes: 64 << 10,
  /** Uncached upstream calls one caller may cause per minute. */
  callsPerMinute: 10,
} as const;
