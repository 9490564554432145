/** Pure: builds the /auth/usage report from minute and day counts. */
import { DAY_MS, MINUTE_MS, dayOf, minuteOf } from './usage-counter.ts';
import type { Static } from '@sinclair/typebox';
import type { Usage } from '../contract/service.ts';
import type { KeyRecord } from './types.ts';

const HOUR_MS = 3_600_000;
/** Buckets shown per series. */
export const USAGE_WINDOWS = { minutes: 60, hours: 24, days: 30 } as const;

/** The /auth/usage report (declared in src/contract/service.ts). */
export type UsageReport = Static<typeof Usage>;
/** One key's part of the report. */
export type KeyUsage = UsageReport['keys'][number];
/** One bucket of a series. */
export type UsageBucket = KeyUsage['per_minute'][number];

/** Series of `n` buckets of `size` ms ending with the bucket holding `now`, filled from `counts`. */
function series(counts: ReadonlyMap<number, number>, now: number, size: number, n: number): UsageBucket[] {
  const last = Math.floor(now / size) * size;
  const out: UsageBucket[] = [];
  for (let i = n - 1; i >= 0; i--) {
    const start = last - i * size;
    out.push({ start: new Date(start).toISOString(), count: counts.get(start) ?? 0 });
  }
  return out;
}

/** Counts per key and bucket start (minute or day). */
export type BucketCounts = Map<string, Map<number, number>>;

/**
 * The counts a report is built from: the database's minute and day rows,
 * plus the counts of `ids` not flushed yet (`pendingOf`: per minute).
 */
export function usageCounts(
  minuteRows: readonly { keyId: string; minute: number; count: number }[],
  dayRows: readonly { keyId: string; day: number; count: number }[],
  ids: readonly string[],
  pendingOf: (keyId: string) => ReadonlyMap<number, number>,
): { minutes: BucketCounts; days: BucketCounts } {
  const minutes: BucketCounts = new Map();
  const days: BucketCounts = new Map();
  for (const r of minuteRows) addCount(minutes, r.keyId, r.minute, r.count);
  for (const r of dayRows) addCount(days, r.keyId, r.day, r.count);
  for (const id of ids) {
    for (const [minute, count] of pendingOf(id)) {
      addCount(minutes, id, minute, count);
      addCount(days, id, dayOf(minute), count);
    }
  }
  return { minutes, days };
}

/** Adds a count into nested maps. */
function addCount(into: BucketCounts, id: string, bucket: number, count: number): void {
  let m = into.get(id);
  if (!m) into.set(id, (m = new Map()));
  m.set(bucket, (m.get(bucket) ?? 0) + count);
}

/** Sum of a bucket series. */
const sum = (buckets: UsageBucket[]): number => buckets.reduce((a, b) => a + b.count, 0);

/** Builds the report. `minutes`/`days` map key id -> bucket start -> count. */
export function buildUsageReport(
  keys: KeyRecord[],
  minutes: ReadonlyMap<string, ReadonlyMap<number, number>>,
  days: ReadonlyMap<string, ReadonlyMap<number, number>>,
  now: number,
): UsageReport {
  const perKey = keys.map((k): KeyUsage => {
    const m = minutes.get(k.id) ?? new Map<number, number>();
    const hours = new Map<number, number>();
    let last24h = 0;
    const since24h = minuteOf(now) - 24 * HOUR_MS;
    for (const [minute, count] of m) {
      const hour = Math.floor(minute / HOUR_MS) * HOUR_MS;
      hours.set(hour, (hours.get(hour) ?? 0) + count);
      if (minute > since24h) last24h += count;
    }
    const perMinute = series(m, now, MINUTE_MS, USAGE_WINDOWS.minutes);
    const perDay = series(days.get(k.id) ?? new Map(), dayOf(now), DAY_MS, USAGE_WINDOWS.days);
    return {
      key_id: k.id,
      name: k.name,
      prefix: k.prefix,
      tier: k.tier,
      revoked: k.revokedAt !== null,
      totals: { last_hour: sum(perMinute), last_24h: last24h, last_30d: sum(perDay) },
      per_minute: perMinute,
      per_hour: series(hours, now, HOUR_MS, USAGE_WINDOWS.hours),
      per_day: perDay,
    };
  });
  return {
    generated_at: new Date(now).toISOString(),
    totals: {
      last_hour: perKey.reduce((a, k) => a + k.totals.last_hour, 0),
      last_24h: perKey.reduce((a, k) => a + k.totals.last_24h, 0),
      last_30d: perKey.reduce((a, k) => a + k.totals.last_30d, 0),
    },
    keys: perKey,
  };
}
