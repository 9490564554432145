/** Session rows: ids live only in cookies, the table holds their SHA-256. */
import { eq, lt } from 'drizzle-orm';
import type { AccountsDb } from './db.ts';
import { sessions } from './schema.ts';
import { generateSessionId, hashSecret } from './secrets.ts';

type Tx = Pick<AccountsDb, 'select' | 'insert' | 'update' | 'delete'>;

export interface SessionRow {
  idHash: string;
  userId: string;
  createdAt: number;
  rotatedAt: number;
  expiresAt: number;
}

/** Creates a session; returns the cookie token (the secret) and its row. */
export function insertSession(db: Tx, userId: string, now: number, ttlMs: number, createdAt = now): { token: string; row: SessionRow } {
  const token = generateSessionId();
  const row: SessionRow = { idHash: hashSecret(token), userId, createdAt, rotatedAt: now, expiresAt: now + ttlMs };
  db.insert(sessions).values(row).run();
  return { token, row };
}

/** The row of a cookie token, or null. */
export function sessionByToken(db: Tx, token: string): SessionRow | null {
  return db.select().from(sessions).where(eq(sessions.idHash, hashSecret(token))).get() ?? null;
}

/** Deletes the session of a token (no-op when absent). */
export function deleteSessionByHash(db: Tx, idHash: string): void {
  db.delete(sessions).where(eq(sessions.idHash, idHash)).run();
}

/** Shortens a replaced session to a grace period, so requests already in flight with it still succeed. */
export function retireSession(db: Tx, row: SessionRow, now: number, graceMs: number): void {
  db.update(sessions)
    .set({ expiresAt: Math.min(row.expiresAt, now + graceMs), rotatedAt: now })
    .where(eq(sessions.idHash, row.idHash))
    .run();
}

/** Removes expired sessions. */
export function purgeExpiredSessions(db: Tx, now: number): void {
  db.delete(sessions).where(lt(sessions.expiresAt, now)).run();
}
