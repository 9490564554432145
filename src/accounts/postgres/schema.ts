/**
 * The accounts schema for PostgreSQL (read by drizzle-kit to generate
 * drizzle/postgres/): the tables of src/accounts/sqlite/schema.ts, column
 * for column, so data moves between the two with a plain copy;
 * test/accounts/schema-parity.test.ts holds the two together. Times are
 * Unix milliseconds in bigint (they overflow a 32-bit integer), and so are
 * counts (a busy key passes 2^31 requests a day). Secrets are never
 * stored: API keys and session ids appear only as SHA-256 hex.
 */
import { pgTable, text, integer, bigint, index, uniqueIndex, primaryKey } from 'drizzle-orm/pg-core';

/** A bigint column read and written as a JS number (ms times and counts stay far below 2^53). */
const int64 = (name: string) => bigint(name, { mode: 'number' });

/** People with an account. */
export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    /** Lower-cased; null when the identity provider gave no verified address. */
    email: text('email'),
    name: text('name'),
    /** Highest tier granted to the user; keys they create default to it. */
    tier: text('tier', { enum: ['free', 'pro'] }).notNull().default('free'),
    createdAt: int64('created_at').notNull(),
  },
  (t) => [uniqueIndex('users_email_unique').on(t.email)],
);

/** Provider accounts (provider + subject) that sign a user in. */
export const identities = pgTable(
  'identities',
  {
    provider: text('provider').notNull(),
    subject: text('subject').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    email: text('email'),
    createdAt: int64('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.subject] }), index('identities_user_idx').on(t.userId)],
);

/** Browser sessions, by hash of the cookie's id. */
export const sessions = pgTable(
  'sessions',
  {
    /** SHA-256 hex of the session id held in the cookie. */
    idHash: text('id_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: int64('created_at').notNull(),
    /** When the id was last replaced; drives rotation. */
    rotatedAt: int64('rotated_at').notNull(),
    expiresAt: int64('expires_at').notNull(),
  },
  (t) => [index('sessions_user_idx').on(t.userId), index('sessions_expires_idx').on(t.expiresAt)],
);

/** API keys, by hash of the secret. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tier: text('tier', { enum: ['free', 'pro'] }).notNull(),
    name: text('name').notNull(),
    /** First characters of the key, for display only. */
    prefix: text('prefix').notNull(),
    /** SHA-256 hex of the whole key. */
    secretHash: text('secret_hash').notNull(),
    createdAt: int64('created_at').notNull(),
    lastUsedAt: int64('last_used_at'),
    revokedAt: int64('revoked_at'),
    /** key_changes.seq of the transaction that last created or revoked this key (incremental cache sync). */
    changeSeq: int64('change_seq').notNull().default(0),
  },
  (t) => [
    uniqueIndex('api_keys_secret_hash_unique').on(t.secretHash),
    index('api_keys_user_idx').on(t.userId),
    index('api_keys_change_seq_idx').on(t.changeSeq),
  ],
);

/**
 * One row (id 1) counting key creations and revocations. Every key write
 * advances it in its own transaction (the row lock orders those
 * transactions), so servers poll this one value to learn that another
 * server changed keys, then read only the keys whose change_seq is newer.
 */
export const keyChanges = pgTable('key_changes', {
  id: integer('id').primaryKey(),
  seq: int64('seq').notNull(),
});

/** Requests per key per UTC minute (pruned after a retention period). */
export const usageMinutes = pgTable(
  'usage_minutes',
  {
    keyId: text('key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    /** Start of the minute, Unix ms. */
    minute: int64('minute').notNull(),
    count: int64('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.minute] }), index('usage_minutes_minute_idx').on(t.minute)],
);

/** Requests per key per UTC day (kept). */
export const usageDays = pgTable(
  'usage_days',
  {
    keyId: text('key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    /** Start of the UTC day, Unix ms. */
    day: int64('day').notNull(),
    count: int64('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.day] })],
);
