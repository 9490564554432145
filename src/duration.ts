/** Durations written as operators write them: `30m`, `6h`, `24h`, `7d` (and `45s` for tests). */

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds of a duration like `6h`; throws naming `what` when the text is not one. */
export function parseDuration(what: string, text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([smhd])$/i.exec(text.trim());
  const ms = m ? Number(m[1]) * UNIT_MS[m[2].toLowerCase()] : NaN;
  if (!(ms >= 1_000) || ms > 366 * UNIT_MS.d) throw new Error(`${what} must be a duration like 30m, 6h, 24h or 7d (got "${text}")`);
  return ms;
}

/** `6h`, `30m`, `7d`: the shortest exact form, for logs. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm'] as const) if (ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  return `${Math.round(ms / 1000)}s`;
}
