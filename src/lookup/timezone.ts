/**
 * A zone name's current UTC offset as `±HH:MM`, computed at answer time so
 * it follows daylight saving. Cached per zone until the next quarter hour.
 */
const formatters = new Map<string, Intl.DateTimeFormat | null>();
const cache = new Map<string, { offset: string | null; until: number }>();
/**
 * UTC offsets change only at whole quarter hours of UTC (every transition in
 * current time zone data: local 02:00 in a zone of +05:45 is 20:15 UTC), so
 * an offset holds until the next one. v1-body.ts reuses a body for as long.
 */
export const QUARTER_HOUR = 15 * 60 * 1000;

function formatterFor(zone: string): Intl.DateTimeFormat | null {
  let f = formatters.get(zone);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
    } catch {
      f = null; // unknown zone name: no offset rather than a wrong one
    }
    formatters.set(zone, f);
  }
  return f;
}

/** The `±HH:MM` offset of `zone` at `at` (ms), or null for an unknown zone. */
export function utcOffset(zone: string, at: number = Date.now()): string | null {
  const hit = cache.get(zone);
  if (hit && at < hit.until && at >= hit.until - QUARTER_HOUR) return hit.offset;
  const f = formatterFor(zone);
  let offset: string | null = null;
  if (f) {
    const name = f.formatToParts(at).find((p) => p.type === 'timeZoneName')?.value ?? '';
    // "GMT+05:30", "GMT-04:00", or plain "GMT" for UTC.
    const m = /^GMT(?:([+-])(\d{1,2})(?::(\d{2}))?)?$/.exec(name);
    if (m) offset = m[1] ? `${m[1]}${m[2].padStart(2, '0')}:${m[3] ?? '00'}` : '+00:00';
  }
  cache.set(zone, { offset, until: Math.floor(at / QUARTER_HOUR) * QUARTER_HOUR + QUARTER_HOUR });
  return offset;
}
