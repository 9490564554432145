/** AccountRows over PostgreSQL (drizzle's pg-core on Bun's built-in SQL client). */
import { and, asc, eq, gt, gte, inArray, isNull, lt, sql } from 'drizzle-orm';
import type { PgDatabase } from 'drizzle-orm/pg-core';
import type { BunSQLQueryResultHKT } from 'drizzle-orm/bun-sql';
import type { AccountRows, ChangedKeyRow, IdentityRow, KeyHashRow, SessionRow } from '../backend.ts';
import type { KeyRecord, KeyTier, ProviderProfile, UserRecord } from '../types.ts';
import type { UsageBatch } from '../usage-counter.ts';
import * as schema from './schema.ts';
import { apiKeys, identities, keyChanges, sessions, usageDays, usageMinutes, users } from './schema.ts';

/** The database or an open transaction on it (both run the same queries). */
export type PgAccountsDb = PgDatabase<BunSQLQueryResultHKT, typeof schema>;

/** The NOTIFY channel of key writes (PostgresBackend.watchKeyChanges listens on it). */
export const KEY_CHANGES_CHANNEL = 'ipintel_key_changes';

/** Rows per multi-row statement: 3 parameters each stays far under PostgreSQL's 65535. */
const CHUNK = 2000;

const keyColumns = {
  id: apiKeys.id,
  userId: apiKeys.userId,
  name: apiKeys.name,
  prefix: apiKeys.prefix,
  tier: apiKeys.tier,
  createdAt: apiKeys.createdAt,
  lastUsedAt: apiKeys.lastUsedAt,
  revokedAt: apiKeys.revokedAt,
};

/** Row operations over the pool (reads) or one transaction (PostgresBackend.transaction). */
export class PostgresRows implements AccountRows {
  constructor(private readonly db: PgAccountsDb) {}

  async userById(userId: string): Promise<UserRecord | null> {
    return (await this.db.select().from(users).where(eq(users.id, userId)).limit(1))[0] ?? null;
  }

  async userByEmail(email: string): Promise<UserRecord | null> {
    return (await this.db.select().from(users).where(eq(users.email, email)).limit(1))[0] ?? null;
  }

  async insertUser(user: UserRecord): Promise<void> {
    await this.db.insert(users).values(user);
  }

  async setUserTier(userId: string, tier: KeyTier): Promise<void> {
    await this.db.update(users).set({ tier }).where(eq(users.id, userId));
  }

  async userByIdentity(provider: string, subject: string): Promise<UserRecord | null> {
    const rows = await this.db
      .select({ user: users })
      .from(identities)
      .innerJoin(users, eq(identities.userId, users.id))
      .where(and(eq(identities.provider, provider), eq(identities.subject, subject)))
      .limit(1);
    return rows[0]?.user ?? null;
  }

  async insertIdentity(userId: string, profile: ProviderProfile, now: number): Promise<void> {
    await this.db.insert(identities).values({ provider: profile.provider, subject: profile.subject, userId, email: profile.email, createdAt: now });
  }

  async identitiesOf(userId: string): Promise<IdentityRow[]> {
    return this.db
      .select({ provider: identities.provider, email: identities.email, createdAt: identities.createdAt })
      .from(identities)
      .where(eq(identities.userId, userId));
  }

  async insertKey(key: KeyRecord, secretHash: string): Promise<void> {
    await this.db.insert(apiKeys).values({ ...key, secretHash, changeSeq: await this.nextKeyChangeSeq() });
  }

  async keysOfUser(userId: string): Promise<KeyRecord[]> {
    return this.db.select(keyColumns).from(apiKeys).where(eq(apiKeys.userId, userId)).orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
  }

  async keyById(keyId: string): Promise<KeyRecord | null> {
    return (await this.db.select(keyColumns).from(apiKeys).where(eq(apiKeys.id, keyId)).limit(1))[0] ?? null;
  }

  async hasActiveKey(userId: string): Promise<boolean> {
    const rows = await this.db.select({ id: apiKeys.id }).from(apiKeys).where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt))).limit(1);
    return rows.length > 0;
  }

  async lockedActiveKeyCount(userId: string): Promise<number> {
    // The user's row lock serializes key creation per user: a second transaction waits here until the first commits, then counts its key.
    await this.db.select({ id: users.id }).from(users).where(eq(users.id, userId)).for('update');
    const [row] = await this.db.select({ n: sql<number>`count(*)::int` }).from(apiKeys).where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)));
    return row?.n ?? 0;
  }

  async markRevoked(keyId: string, now: number): Promise<void> {
    const seq = await this.nextKeyChangeSeq();
    await this.db.update(apiKeys).set({ revokedAt: now, changeSeq: seq }).where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)));
  }

  async activeKeyHashes(): Promise<KeyHashRow[]> {
    return this.db
      .select({ secretHash: apiKeys.secretHash, keyId: apiKeys.id, userId: apiKeys.userId, tier: apiKeys.tier })
      .from(apiKeys)
      .where(isNull(apiKeys.revokedAt));
  }

  async keyChangeSeq(): Promise<number> {
    return (await this.db.select({ seq: keyChanges.seq }).from(keyChanges).where(eq(keyChanges.id, 1)))[0]?.seq ?? 0;
  }

  async keysChangedSince(seq: number): Promise<ChangedKeyRow[]> {
    const rows = await this.db
      .select({ secretHash: apiKeys.secretHash, keyId: apiKeys.id, userId: apiKeys.userId, tier: apiKeys.tier, revokedAt: apiKeys.revokedAt })
      .from(apiKeys)
      .where(gt(apiKeys.changeSeq, seq));
    return rows.map(({ revokedAt, ...k }) => ({ ...k, revoked: revokedAt !== null }));
  }

  async insertSession(row: SessionRow): Promise<void> {
    await this.db.insert(sessions).values(row);
  }

  async sessionByHash(idHash: string): Promise<SessionRow | null> {
    return (await this.db.select().from(sessions).where(eq(sessions.idHash, idHash)).limit(1))[0] ?? null;
  }

  async deleteSessionByHash(idHash: string): Promise<void> {
    await this.db.delete(sessions).where(eq(sessions.idHash, idHash));
  }

  async retireSession(row: SessionRow, now: number, graceMs: number): Promise<void> {
    await this.db
      .update(sessions)
      .set({ expiresAt: Math.min(row.expiresAt, now + graceMs), rotatedAt: now })
      .where(eq(sessions.idHash, row.idHash));
  }

  async purgeExpiredSessions(now: number): Promise<void> {
    await this.db.delete(sessions).where(lt(sessions.expiresAt, now));
  }

  async writeUsageBatch(batch: UsageBatch): Promise<void> {
    // Multi-row statements: each is a network round trip, so a flush costs a
    // few of them rather than one per key and minute. A batch never holds the
    // same (key, bucket) twice, which ON CONFLICT DO UPDATE requires.
    for (const rows of chunks(batch.minutes)) {
      await this.db
        .insert(usageMinutes)
        .values(rows)
        .onConflictDoUpdate({ target: [usageMinutes.keyId, usageMinutes.minute], set: { count: sql`${usageMinutes.count} + excluded.count` } });
    }
    for (const rows of chunks(batch.days)) {
      await this.db
        .insert(usageDays)
        .values(rows)
        .onConflictDoUpdate({ target: [usageDays.keyId, usageDays.day], set: { count: sql`${usageDays.count} + excluded.count` } });
    }
    for (const rows of chunks(batch.lastUsed)) {
      const values = sql.join(
        rows.map((u) => sql`(${u.keyId}::text, ${u.at}::bigint)`),
        sql`, `,
      );
      await this.db.execute(
        sql`update ${apiKeys} set last_used_at = greatest(coalesce(${apiKeys.lastUsedAt}, 0), v.at) from (values ${values}) as v(id, at) where ${apiKeys.id} = v.id`,
      );
    }
  }

  async pruneMinutes(before: number): Promise<void> {
    await this.db.delete(usageMinutes).where(lt(usageMinutes.minute, before));
  }

  async minuteRows(keyIds: string[], from: number): Promise<{ keyId: string; minute: number; count: number }[]> {
    if (keyIds.length === 0) return [];
    return this.db.select().from(usageMinutes).where(and(inArray(usageMinutes.keyId, keyIds), gte(usageMinutes.minute, from)));
  }

  async dayRows(keyIds: string[], from: number): Promise<{ keyId: string; day: number; count: number }[]> {
    if (keyIds.length === 0) return [];
    return this.db.select().from(usageDays).where(and(inArray(usageDays.keyId, keyIds), gte(usageDays.day, from)));
  }

  /**
   * Advances the key change counter inside the current transaction; returns
   * the new value. The row lock it takes is held to commit, so key writes
   * commit in counter order and a server that has seen value N has seen
   * every key write numbered N or below. The NOTIFY is delivered only if
   * and when the transaction commits.
   */
  private async nextKeyChangeSeq(): Promise<number> {
    const rows = await this.db
      .insert(keyChanges)
      .values({ id: 1, seq: 1 })
      .onConflictDoUpdate({ target: keyChanges.id, set: { seq: sql`${keyChanges.seq} + 1` } })
      .returning({ seq: keyChanges.seq });
    const seq = rows[0]!.seq;
    await this.db.execute(sql`select pg_notify(${KEY_CHANGES_CHANNEL}, ${String(seq)})`);
    return seq;
  }
}

/** Splits rows into statement-sized chunks. */
function* chunks<T>(rows: T[]): Generator<T[]> {
  for (let i = 0; i < rows.length; i += CHUNK) yield rows.slice(i, i + CHUNK);
}
