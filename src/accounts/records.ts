/**
 * New rows with their secrets (pure apart from randomness and ids), built
 * here once so that both dialects store exactly the same thing: the
 * secret goes back to the caller, only its SHA-256 goes to the database.
 */
import type { SessionRow } from './backend.ts';
import { displayPrefix, generateApiKey, generateSessionId, hashSecret } from './secrets.ts';
import type { CreatedKey, KeyRecord, KeyTier, UserRecord } from './types.ts';

/** A new user row. */
export function newUser(fields: { email: string | null; name: string | null; tier: KeyTier }, now: number): UserRecord {
  return { id: Bun.randomUUIDv7(), email: fields.email, name: fields.name, tier: fields.tier, createdAt: now };
}

/** A new key: its row, its secret (shown once) and the hash that is stored. */
export function newKey(userId: string, name: string, tier: KeyTier, now: number): CreatedKey & { secretHash: string } {
  const secret = generateApiKey();
  const key: KeyRecord = { id: Bun.randomUUIDv7(), userId, name, prefix: displayPrefix(secret), tier, createdAt: now, lastUsedAt: null, revokedAt: null };
  return { key, secret, secretHash: hashSecret(secret) };
}

/** A new session: the cookie token (the secret) and its row. */
export function newSession(userId: string, now: number, ttlMs: number, createdAt = now): { token: string; row: SessionRow } {
  const token = generateSessionId();
  return { token, row: { idHash: hashSecret(token), userId, createdAt, rotatedAt: now, expiresAt: now + ttlMs } };
}
