/** AccountRows over Bun SQLite (drizzle's synchronous driver; results are wrapped in promises for the shared interface). */
import { and, asc, eq, gt, gte, inArray, isNull, lt, sql } from 'drizzle-orm';
import type { AccountRows, ChangedKeyRow, IdentityRow, KeyHashRow, SessionRow } from '../backend.ts';
import type { KeyRecord, KeyTier, ProviderProfile, UserRecord } from '../types.ts';
import type { UsageBatch } from '../usage-counter.ts';
import type { SqliteAccountsDb } from './db.ts';
import { apiKeys, identities, keyChanges, sessions, usageDays, usageMinutes, users } from './schema.ts';

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

/** The usage flush's three statements, with placeholders for each row's values. */
function prepareUsageWrites(db: SqliteAccountsDb) {
  return {
    minute: db
      .insert(usageMinutes)
      .values({ keyId: sql.placeholder('keyId'), minute: sql.placeholder('minute'), count: sql.placeholder('count') })
      .onConflictDoUpdate({ target: [usageMinutes.keyId, usageMinutes.minute], set: { count: sql`${usageMinutes.count} + excluded.count` } })
      .prepare(),
    day: db
      .insert(usageDays)
      .values({ keyId: sql.placeholder('keyId'), day: sql.placeholder('day'), count: sql.placeholder('count') })
      .onConflictDoUpdate({ target: [usageDays.keyId, usageDays.day], set: { count: sql`${usageDays.count} + excluded.count` } })
      .prepare(),
    lastUsed: db
      .update(apiKeys)
      .set({ lastUsedAt: sql`max(coalesce(${apiKeys.lastUsedAt}, 0), ${sql.placeholder('at')})` })
      .where(eq(apiKeys.id, sql.placeholder('keyId')))
      .prepare(),
  };
}
type UsageWrites = ReturnType<typeof prepareUsageWrites>;

/** Row operations on one SQLite connection (transactions are opened around them by SqliteBackend). */
export class SqliteRows implements AccountRows {
  /** The usage flush's statements, prepared at the first flush. */
  private usageWrites: UsageWrites | null = null;

  constructor(private readonly db: SqliteAccountsDb) {}

  async userById(userId: string): Promise<UserRecord | null> {
    return this.db.select().from(users).where(eq(users.id, userId)).get() ?? null;
  }

  async userByEmail(email: string): Promise<UserRecord | null> {
    return this.db.select().from(users).where(eq(users.email, email)).get() ?? null;
  }

  async insertUser(user: UserRecord): Promise<void> {
    this.db.insert(users).values(user).run();
  }

  async setUserTier(userId: string, tier: KeyTier): Promise<void> {
    this.db.update(users).set({ tier }).where(eq(users.id, userId)).run();
  }

  async userByIdentity(provider: string, subject: string): Promise<UserRecord | null> {
    const row = this.db
      .select({ user: users })
      .from(identities)
      .innerJoin(users, eq(identities.userId, users.id))
      .where(and(eq(identities.provider, provider), eq(identities.subject, subject)))
      .get();
    return row?.user ?? null;
  }

  async insertIdentity(userId: string, profile: ProviderProfile, now: number): Promise<void> {
    this.db.insert(identities).values({ provider: profile.provider, subject: profile.subject, userId, email: profile.email, createdAt: now }).run();
  }

  async identitiesOf(userId: string): Promise<IdentityRow[]> {
    return this.db
      .select({ provider: identities.provider, email: identities.email, createdAt: identities.createdAt })
      .from(identities)
      .where(eq(identities.userId, userId))
      .all();
  }

  async insertKey(key: KeyRecord, secretHash: string): Promise<void> {
    this.db.insert(apiKeys).values({ ...key, secretHash, changeSeq: this.nextKeyChangeSeq() }).run();
  }

  async keysOfUser(userId: string): Promise<KeyRecord[]> {
    return this.db.select(keyColumns).from(apiKeys).where(eq(apiKeys.userId, userId)).orderBy(asc(apiKeys.createdAt), asc(apiKeys.id)).all();
  }

  async keyById(keyId: string): Promise<KeyRecord | null> {
    return this.db.select(keyColumns).from(apiKeys).where(eq(apiKeys.id, keyId)).get() ?? null;
  }

  async hasActiveKey(userId: string): Promise<boolean> {
    return this.db.select({ id: apiKeys.id }).from(apiKeys).where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt))).limit(1).get() !== undefined;
  }

  async lockedActiveKeyCount(userId: string): Promise<number> {
    return this.db.select({ n: sql<number>`count(*)` }).from(apiKeys).where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt))).get()?.n ?? 0;
  }

  async markRevoked(keyId: string, now: number): Promise<void> {
    const seq = this.nextKeyChangeSeq();
    this.db.update(apiKeys).set({ revokedAt: now, changeSeq: seq }).where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt))).run();
  }

  async activeKeyHashes(): Promise<KeyHashRow[]> {
    return this.db
      .select({ secretHash: apiKeys.secretHash, keyId: apiKeys.id, userId: apiKeys.userId, tier: apiKeys.tier })
      .from(apiKeys)
      .where(isNull(apiKeys.revokedAt))
      .all();
  }

  async keyChangeSeq(): Promise<number> {
    return this.db.select({ seq: keyChanges.seq }).from(keyChanges).where(eq(keyChanges.id, 1)).get()?.seq ?? 0;
  }

  async keysChangedSince(seq: number): Promise<ChangedKeyRow[]> {
    return this.db
      .select({ secretHash: apiKeys.secretHash, keyId: apiKeys.id, userId: apiKeys.userId, tier: apiKeys.tier, revokedAt: apiKeys.revokedAt })
      .from(apiKeys)
      .where(gt(apiKeys.changeSeq, seq))
      .all()
      .map(({ revokedAt, ...k }) => ({ ...k, revoked: revokedAt !== null }));
  }

  async insertSession(row: SessionRow): Promise<void> {
    this.db.insert(sessions).values(row).run();
  }

  async sessionByHash(idHash: string): Promise<SessionRow | null> {
    return this.db.select().from(sessions).where(eq(sessions.idHash, idHash)).get() ?? null;
  }

  async deleteSessionByHash(idHash: string): Promise<void> {
    this.db.delete(sessions).where(eq(sessions.idHash, idHash)).run();
  }

  async retireSession(row: SessionRow, now: number, graceMs: number): Promise<void> {
    this.db
      .update(sessions)
      .set({ expiresAt: Math.min(row.expiresAt, now + graceMs), rotatedAt: now })
      .where(eq(sessions.idHash, row.idHash))
      .run();
  }

  async purgeExpiredSessions(now: number): Promise<void> {
    this.db.delete(sessions).where(lt(sessions.expiresAt, now)).run();
  }

  async writeUsageBatch(batch: UsageBatch): Promise<void> {
    // One statement per row, far from SQLite's limit on bound parameters per
    // statement; prepared once per connection, since building and preparing
    // each row's statement anew held the serving thread for most of a flush.
    const write = (this.usageWrites ??= prepareUsageWrites(this.db));
    for (const m of batch.minutes) write.minute.run(m);
    for (const d of batch.days) write.day.run(d);
    for (const u of batch.lastUsed) write.lastUsed.run(u);
  }

  async pruneMinutes(before: number): Promise<void> {
    this.db.delete(usageMinutes).where(lt(usageMinutes.minute, before)).run();
  }

  async minuteRows(keyIds: string[], from: number): Promise<{ keyId: string; minute: number; count: number }[]> {
    if (keyIds.length === 0) return [];
    return this.db.select().from(usageMinutes).where(and(inArray(usageMinutes.keyId, keyIds), gte(usageMinutes.minute, from))).all();
  }

  async dayRows(keyIds: string[], from: number): Promise<{ keyId: string; day: number; count: number }[]> {
    if (keyIds.length === 0) return [];
    return this.db.select().from(usageDays).where(and(inArray(usageDays.keyId, keyIds), gte(usageDays.day, from))).all();
  }

  /** Advances the key change counter inside the current transaction; returns the new value. */
  private nextKeyChangeSeq(): number {
    return this.db
      .insert(keyChanges)
      .values({ id: 1, seq: 1 })
      .onConflictDoUpdate({ target: keyChanges.id, set: { seq: sql`${keyChanges.seq} + 1` } })
      .returning({ seq: keyChanges.seq })
      .get()!.seq;
  }
}
