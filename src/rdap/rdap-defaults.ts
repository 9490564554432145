/** The RDAP client's default options, on their own: the memory budget reads them without loading the client. */

/** Defaults of the client options: short timeout, generous cache for answers, brief one for failures. */
export const RDAP_DEFAULTS = {
  timeoutMs: 2500,
  cacheSize: 10_000,
  cacheMaxBytes: 64 << 20,
  cacheTtlMs: 6 * 60 * 60 * 1000,
  negativeTtlMs: 60 * 1000,
  maxRedirects: 3,
  maxBodyBytes: 1 << 20,
} as const;
