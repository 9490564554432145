/**
 * The accounts schema for SQLite (read by drizzle-kit to generate
 * drizzle/sqlite/). src/accounts/postgres/schema.ts is the same tables for
 * PostgreSQL, column for column; test/accounts/schema-parity.test.ts holds
 * the two together. Times are Unix milliseconds. Secrets are never stored:
 * API keys and session ids appear only as SHA-256 hex.
 */
import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from 'drizzle-orm/sqlite-core';

/** People with an account. */
export const users = sqliteTable(
  'users',
  {
    id: text('id').primaryKey(),
    /** Lower-cased; null when the identity provider gave no verified address. */
    email: text('email'),
    name: text('name'),
    /** Highest tier granted to the user; keys they create default to it. */
    tier: text('tier', { enum: ['free', 'pro'] }).notNull().default('free'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [uniqueIndex('users_email_unique').on(t.email)],
);

/** Provider accounts (provider + subject) that sign a user in. */
export const identities = sqliteTable(
  'identities',
  {
    provider: text('provider').notNull(),
    subject: text('subject').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    email: text('email'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.subject] }), index('identities_user_idx').on(t.userId)],
);

/** Browser sessions, by hash of the cookie's id. */
export const sessions = sqliteTable(
  'sessions',
  {
    /** SHA-256 hex of the session id held in the cookie. */
    idHash: text('id_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
    /** When the id was last replaced; drives rotation. */
    rotatedAt: integer('rotated_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('sessions_user_idx').on(t.userId), index('sessions_expires_idx').on(t.expiresAt)],
);

/** API keys, by hash of the secret. */
export const apiKeys = sqliteTable(
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
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
    revokedAt: integer('revoked_at'),
    /** key_changes.seq of the transaction that last created or revoked this key (incremental cache sync). */
    changeSeq: integer('change_seq').notNull().default(0),
  },
  (t) => [
    uniqueIndex('api_keys_secret_hash_unique').on(t.secretHash),
    index('api_keys_user_idx').on(t.userId),
    index('api_keys_change_seq_idx').on(t.changeSeq),
  ],
);

/**
 * One row (id 1) counting key creations and revocations. Every key write
 * advances it in its own transaction, so servers poll this one value to
 * learn that another process changed keys, then read only the keys whose
 * change_seq is newer.
 */
export const keyChanges = sqliteTable('key_changes', {
  id: integer('id').primaryKey(),
  seq: integer('seq').notNull(),
});

/** Requests per key per UTC minute (pruned after a retention period). */
export const usageMinutes = sqliteTable(
  'usage_minutes',
  {
    keyId: text('key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    /** Start of the minute, Unix ms. */
    minute: integer('minute').notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.minute] }), index('usage_minutes_minute_idx').on(t.minute)],
);

/** Requests per key per UTC day (kept). */
export const usageDays = sqliteTable(
  'usage_days',
  {
    keyId: text('key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    /** Start of the UTC day, Unix ms. */
    day: integer('day').notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.day] })],
);
