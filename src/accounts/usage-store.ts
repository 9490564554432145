/** Usage rows: batched upserts from the in-memory counter, and reads for reports. */
import { and, eq, gte, inArray, lt, sql } from 'drizzle-orm';
import type { AccountsDb } from './db.ts';
import { apiKeys, usageDays, usageMinutes } from './schema.ts';
import type { UsageBatch } from './usage-counter.ts';

type Tx = Pick<AccountsDb, 'select' | 'insert' | 'update' | 'delete'>;

/** Adds a batch to the usage tables and advances last-used times (call inside a transaction). */
export function writeUsageBatch(db: Tx, batch: UsageBatch): void {
  for (const m of batch.minutes) {
    db.insert(usageMinutes)
      .values(m)
      .onConflictDoUpdate({ target: [usageMinutes.keyId, usageMinutes.minute], set: { count: sql`${usageMinutes.count} + excluded.count` } })
      .run();
  }
  for (const d of batch.days) {
    db.insert(usageDays)
      .values(d)
      .onConflictDoUpdate({ target: [usageDays.keyId, usageDays.day], set: { count: sql`${usageDays.count} + excluded.count` } })
      .run();
  }
  for (const u of batch.lastUsed) {
    db.update(apiKeys)
      .set({ lastUsedAt: sql`max(coalesce(${apiKeys.lastUsedAt}, 0), ${u.at})` })
      .where(eq(apiKeys.id, u.keyId))
      .run();
  }
}

/** Drops minute rows older than `before` (day rows are kept). */
export function pruneMinutes(db: Tx, before: number): void {
  db.delete(usageMinutes).where(lt(usageMinutes.minute, before)).run();
}

/** Minute rows of some keys since `from`. */
export function minuteRows(db: Tx, keyIds: string[], from: number): { keyId: string; minute: number; count: number }[] {
  if (keyIds.length === 0) return [];
  return db.select().from(usageMinutes).where(and(inArray(usageMinutes.keyId, keyIds), gte(usageMinutes.minute, from))).all();
}

/** Day rows of some keys since `from`. */
export function dayRows(db: Tx, keyIds: string[], from: number): { keyId: string; day: number; count: number }[] {
  if (keyIds.length === 0) return [];
  return db.select().from(usageDays).where(and(inArray(usageDays.keyId, keyIds), gte(usageDays.day, from))).all();
}
