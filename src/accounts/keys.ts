/** API key rows: create, list, revoke (secrets arrive here only to be hashed). */
import { and, eq, isNull, asc } from 'drizzle-orm';
import type { AccountsDb } from './db.ts';
import { apiKeys } from './schema.ts';
import { displayPrefix, generateApiKey, hashSecret } from './secrets.ts';
import type { CreatedKey, KeyRecord, KeyTier } from './types.ts';

type Tx = Pick<AccountsDb, 'select' | 'insert' | 'update'>;

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

/** Inserts a new key for a user; returns it with its secret (shown once, never stored). */
export function insertKey(db: Tx, userId: string, name: string, tier: KeyTier, now: number): CreatedKey & { secretHash: string } {
  const secret = generateApiKey();
  const secretHash = hashSecret(secret);
  const key: KeyRecord = {
    id: Bun.randomUUIDv7(),
    userId,
    name,
    prefix: displayPrefix(secret),
    tier,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
  };
  db.insert(apiKeys).values({ ...key, secretHash }).run();
  return { key, secret, secretHash };
}

/** Keys of a user, oldest first, revoked ones included. */
export function keysOfUser(db: Tx, userId: string): KeyRecord[] {
  return db.select(keyColumns).from(apiKeys).where(eq(apiKeys.userId, userId)).orderBy(asc(apiKeys.createdAt), asc(apiKeys.id)).all();
}

/** One key by id, or null. */
export function keyById(db: Tx, keyId: string): KeyRecord | null {
  return db.select(keyColumns).from(apiKeys).where(eq(apiKeys.id, keyId)).get() ?? null;
}

/** Whether a user holds any active key. */
export function hasActiveKey(db: Tx, userId: string): boolean {
  return db.select({ id: apiKeys.id }).from(apiKeys).where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt))).limit(1).get() !== undefined;
}

/** Marks a key revoked (idempotent: keeps the first revocation time). */
export function markRevoked(db: Tx, keyId: string, now: number): void {
  db.update(apiKeys).set({ revokedAt: now }).where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt))).run();
}

/** Every active key with its hash, for the in-memory resolver. */
export function activeKeyHashes(db: Tx): { secretHash: string; keyId: string; userId: string; tier: KeyTier }[] {
  return db
    .select({ secretHash: apiKeys.secretHash, keyId: apiKeys.id, userId: apiKeys.userId, tier: apiKeys.tier })
    .from(apiKeys)
    .where(isNull(apiKeys.revokedAt))
    .all();
}
