/**
 * In-memory request counters per API key and minute. The hot path only
 * increments a Map; the store drains it into SQLite in batches.
 */

/** One minute in ms. */
export const MINUTE_MS = 60_000;
/** One day in ms. */
export const DAY_MS = 86_400_000;

/** One flush worth of counts. */
export interface UsageBatch {
  minutes: { keyId: string; minute: number; count: number }[];
  days: { keyId: string; day: number; count: number }[];
  /** Latest request time per key. */
  lastUsed: { keyId: string; at: number }[];
}

/** Start of the UTC minute containing `at`. */
export function minuteOf(at: number): number {
  return Math.floor(at / MINUTE_MS) * MINUTE_MS;
}

/** Start of the UTC day containing `at`. */
export function dayOf(at: number): number {
  return Math.floor(at / DAY_MS) * DAY_MS;
}

/** Pending counts, keyed by key id then minute start. */
export class UsageCounter {
  private pending = new Map<string, Map<number, number>>();
  private lastUsed = new Map<string, number>();

  /** Counts one request of `keyId` at time `at`. */
  record(keyId: string, at: number): void {
    const minute = minuteOf(at);
    let perMinute = this.pending.get(keyId);
    if (!perMinute) this.pending.set(keyId, (perMinute = new Map()));
    perMinute.set(minute, (perMinute.get(minute) ?? 0) + 1);
    if (at > (this.lastUsed.get(keyId) ?? 0)) this.lastUsed.set(keyId, at);
  }

  /** Whether anything waits to be flushed. */
  isEmpty(): boolean {
    return this.pending.size === 0;
  }

  /** Not-yet-flushed counts of one key, per minute start. */
  pendingOf(keyId: string): ReadonlyMap<number, number> {
    return this.pending.get(keyId) ?? new Map();
  }

  /** Not-yet-flushed last-use time of one key. */
  pendingLastUsed(keyId: string): number | null {
    return this.lastUsed.get(keyId) ?? null;
  }

  /** Takes everything pending as a batch and starts afresh. */
  drain(): UsageBatch {
    const batch = toBatch(this.pending, this.lastUsed);
    this.pending = new Map();
    this.lastUsed = new Map();
    return batch;
  }

  /** Puts a batch back after a failed flush, so counts are not lost. */
  restore(batch: UsageBatch): void {
    for (const m of batch.minutes) {
      let perMinute = this.pending.get(m.keyId);
      if (!perMinute) this.pending.set(m.keyId, (perMinute = new Map()));
      perMinute.set(m.minute, (perMinute.get(m.minute) ?? 0) + m.count);
    }
    for (const u of batch.lastUsed) {
      if (u.at > (this.lastUsed.get(u.keyId) ?? 0)) this.lastUsed.set(u.keyId, u.at);
    }
  }
}

/** Pure: turns pending minute counts into minute rows, day rows and last-use times. */
export function toBatch(pending: ReadonlyMap<string, ReadonlyMap<number, number>>, lastUsed: ReadonlyMap<string, number>): UsageBatch {
  const minutes: UsageBatch['minutes'] = [];
  const dayTotals = new Map<string, { keyId: string; day: number; count: number }>();
  for (const [keyId, perMinute] of pending) {
    for (const [minute, count] of perMinute) {
      minutes.push({ keyId, minute, count });
      const day = dayOf(minute);
      const k = `${keyId}\u0000${day}`;
      const row = dayTotals.get(k);
      if (row) row.count += count;
      else dayTotals.set(k, { keyId, day, count });
    }
  }
  return {
    minutes,
    days: [...dayTotals.values()],
    lastUsed: [...lastUsed].map(([keyId, at]) => ({ keyId, at })),
  };
}

/** Pure: a batch cut into batches of at most `maxKeys` keys each, every key's rows in one of them (at least one batch, maybe empty). */
export function splitBatch(batch: UsageBatch, maxKeys: number): UsageBatch[] {
  const chunkOf = new Map<string, number>();
  const chunks: UsageBatch[] = [];
  const chunkFor = (keyId: string): UsageBatch => {
    let c = chunkOf.get(keyId);
    if (c === undefined) {
      c = Math.floor(chunkOf.size / maxKeys);
      chunkOf.set(keyId, c);
      if (c === chunks.length) chunks.push({ minutes: [], days: [], lastUsed: [] });
    }
    return chunks[c];
  };
  for (const m of batch.minutes) chunkFor(m.keyId).minutes.push(m);
  for (const d of batch.days) chunkFor(d.keyId).days.push(d);
  for (const u of batch.lastUsed) chunkFor(u.keyId).lastUsed.push(u);
  return chunks.length > 0 ? chunks : [{ minutes: [], days: [], lastUsed: [] }];
}
