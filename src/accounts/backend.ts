/**
 * What the AccountStore needs from a database, so one store (cache, usage
 * counting, sign-in and session rules) runs on SQLite or PostgreSQL. Each
 * dialect implements AccountRows with its own drizzle schema; every method
 * is async because PostgreSQL is a network round trip.
 */
import type { KeyRecord, KeyTier, ProviderProfile, UserRecord } from './types.ts';
import type { UsageBatch } from './usage-counter.ts';

/** A session row: the table holds only the SHA-256 of the cookie's id. */
export interface SessionRow {
  idHash: string;
  userId: string;
  createdAt: number;
  rotatedAt: number;
  expiresAt: number;
}

/** A key row as the in-memory resolver needs it. */
export interface KeyHashRow {
  secretHash: string;
  keyId: string;
  userId: string;
  tier: KeyTier;
}

/** A key created or revoked since some change sequence number. */
export interface ChangedKeyRow extends KeyHashRow {
  revoked: boolean;
}

/** A linked identity provider account (for /auth/me). */
export interface IdentityRow {
  provider: string;
  email: string | null;
  createdAt: number;
}

/** Row operations of one dialect. Inside `transaction` they all run in that one transaction. */
export interface AccountRows {
  userById(userId: string): Promise<UserRecord | null>;
  userByEmail(email: string): Promise<UserRecord | null>;
  insertUser(user: UserRecord): Promise<void>;
  setUserTier(userId: string, tier: KeyTier): Promise<void>;
  userByIdentity(provider: string, subject: string): Promise<UserRecord | null>;
  insertIdentity(userId: string, profile: ProviderProfile, now: number): Promise<void>;
  identitiesOf(userId: string): Promise<IdentityRow[]>;

  /** Inserts a key and advances the key change counter (one transaction: the caller's). */
  insertKey(key: KeyRecord, secretHash: string): Promise<void>;
  keysOfUser(userId: string): Promise<KeyRecord[]>;
  keyById(keyId: string): Promise<KeyRecord | null>;
  hasActiveKey(userId: string): Promise<boolean>;
  /**
   * The number of a user's active keys, taking the lock that makes a
   * count-then-insert in the same transaction atomic against other servers
   * and workers (PostgreSQL: the user's row FOR UPDATE; SQLite: BEGIN
   * IMMEDIATE already holds the database's write lock).
   */
  lockedActiveKeyCount(userId: string): Promise<number>;
  /** Marks a key revoked, keeping the first revocation time, and advances the key change counter. */
  markRevoked(keyId: string, now: number): Promise<void>;
  activeKeyHashes(): Promise<KeyHashRow[]>;
  /** The key change counter (0 before the first key write). */
  keyChangeSeq(): Promise<number>;
  /** Keys created or revoked in transactions numbered above `seq`. */
  keysChangedSince(seq: number): Promise<ChangedKeyRow[]>;

  insertSession(row: SessionRow): Promise<void>;
  sessionByHash(idHash: string): Promise<SessionRow | null>;
  deleteSessionByHash(idHash: string): Promise<void>;
  /** Shortens a replaced session to a grace period, so requests already in flight with it still succeed. */
  retireSession(row: SessionRow, now: number, graceMs: number): Promise<void>;
  purgeExpiredSessions(now: number): Promise<void>;

  /** Adds a batch to the usage tables and advances last-used times. */
  writeUsageBatch(batch: UsageBatch): Promise<void>;
  /** Drops minute rows older than `before` (day rows are kept). */
  pruneMinutes(before: number): Promise<void>;
  minuteRows(keyIds: string[], from: number): Promise<{ keyId: string; minute: number; count: number }[]>;
  dayRows(keyIds: string[], from: number): Promise<{ keyId: string; day: number; count: number }[]>;
}

/** A connected, migrated database of one dialect. */
export interface AccountsBackend {
  readonly dialect: 'sqlite' | 'postgres';
  /** Runs `work` in one transaction: all of it commits or none of it does. */
  transaction<T>(work: (rows: AccountRows) => Promise<T>): Promise<T>;
  /** Runs reads that need no transaction. */
  read<T>(work: (rows: AccountRows) => Promise<T>): Promise<T>;
  /**
   * Where the database can push news of key writes by other processes
   * (PostgreSQL LISTEN): calls `onChange` after each, and again after every
   * reconnection, since notifications sent meanwhile are lost. Resolves with
   * a function that stops listening. Absent when the database cannot push.
   */
  watchKeyChanges?(onChange: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
