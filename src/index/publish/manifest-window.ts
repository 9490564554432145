/**
 * When a signed manifest may be believed: never built in the future (beyond
 * a small clock skew), and, for a pulling server, never older than its
 * maximum age (IPINTEL_INDEX_MAX_AGE). A signature proves who published a
 * file, not that it is current: a replayed old publish freezes a fleet, and
 * one dated years ahead would make every honest publish look like a rollback.
 */

/** How far a build time may lie in the future of this clock (clocks of two hosts disagree a little). */
export const MAX_FUTURE_SKEW_MS = 10 * 60_000;

/** IPINTEL_INDEX_MAX_AGE when unset. */
export const DEFAULT_INDEX_MAX_AGE = '30d';

/** Why a manifest built at `builtAt` may not be believed at `now`, or null when it may. */
export function buildTimeRefusal(builtAt: string, now: number, maxAgeMs: number): string | null {
  const built = Date.parse(builtAt);
  if (built > now + MAX_FUTURE_SKEW_MS) return `manifest built ${builtAt} lies in the future of this clock (${new Date(now).toISOString()}); refused`;
  if (now - built > maxAgeMs) return `manifest built ${builtAt} is past IPINTEL_INDEX_MAX_AGE (expired ${expiresAt(builtAt, maxAgeMs)}); the publisher has not published since`;
  return null;
}

/** When an index built at `builtAt` stops being believed. */
export function expiresAt(builtAt: string, maxAgeMs: number): string {
  return new Date(Date.parse(builtAt) + maxAgeMs).toISOString();
}

/** Whether an index built at `builtAt` is past its maximum age at `now`. */
export function isExpired(builtAt: string, now: number, maxAgeMs: number): boolean {
  return now - Date.parse(builtAt) > maxAgeMs;
}
