/** User and identity rows: lookups and the sign-in upsert (callers wrap writes in transactions). */
import { and, eq } from 'drizzle-orm';
import type { AccountsDb } from './db.ts';
import { identities, users } from './schema.ts';
import type { KeyTier, ProviderProfile, UserRecord } from './types.ts';
import { tierRank } from './validation.ts';

type Tx = Pick<AccountsDb, 'select' | 'insert' | 'update' | 'delete'>;

/** A user by id, or null. */
export function userById(db: Tx, userId: string): UserRecord | null {
  return db.select().from(users).where(eq(users.id, userId)).get() ?? null;
}

/** A user by normalised email, or null. */
export function userByEmail(db: Tx, email: string): UserRecord | null {
  return db.select().from(users).where(eq(users.email, email)).get() ?? null;
}

/** Inserts a new user. */
export function insertUser(db: Tx, fields: { email: string | null; name: string | null; tier: KeyTier }, now: number): UserRecord {
  const row: UserRecord = { id: Bun.randomUUIDv7(), email: fields.email, name: fields.name, tier: fields.tier, createdAt: now };
  db.insert(users).values(row).run();
  return row;
}

/** Raises a user's tier to `tier` (never lowers it); returns the resulting user. */
export function raiseTier(db: Tx, user: UserRecord, tier: KeyTier): UserRecord {
  if (tierRank(tier) <= tierRank(user.tier)) return user;
  db.update(users).set({ tier }).where(eq(users.id, user.id)).run();
  return { ...user, tier };
}

/** The user behind a provider identity, or null when it is new. */
export function userByIdentity(db: Tx, provider: string, subject: string): UserRecord | null {
  const row = db
    .select({ user: users })
    .from(identities)
    .innerJoin(users, eq(identities.userId, users.id))
    .where(and(eq(identities.provider, provider), eq(identities.subject, subject)))
    .get();
  return row?.user ?? null;
}

/** Records that a provider identity belongs to a user. */
export function insertIdentity(db: Tx, userId: string, profile: ProviderProfile, now: number): void {
  db.insert(identities)
    .values({ provider: profile.provider, subject: profile.subject, userId, email: profile.email, createdAt: now })
    .run();
}

/** Provider identities of a user (for /auth/me). */
export function identitiesOf(db: Tx, userId: string): { provider: string; email: string | null; createdAt: number }[] {
  return db
    .select({ provider: identities.provider, email: identities.email, createdAt: identities.createdAt })
    .from(identities)
    .where(eq(identities.userId, userId))
    .all();
}
