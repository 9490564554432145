/**
 * AccountStore: the one service the HTTP routes, the app's key resolver
 * and the keys script share. SQLite is touched only off the hot path:
 * key resolution reads an in-memory cache and usage is counted in memory
 * and flushed in batches inside one transaction.
 */
import type { Database } from 'bun:sqlite';
import { dataVersion, openDatabase, type AccountsDb } from './db.ts';
import { KeyCache, type ResolvedKey } from './key-cache.ts';
import { activeKeyHashes, hasActiveKey, insertKey, keyById, keysOfUser, markRevoked } from './keys.ts';
import { hashSecret, isApiKeyShaped } from './secrets.ts';
import { deleteSessionByHash, insertSession, purgeExpiredSessions, retireSession, sessionByToken } from './sessions.ts';
import type { CreatedKey, KeyRecord, KeyTier, ProviderProfile, SessionRecord, SignInResult, UserRecord } from './types.ts';
import { DAY_MS, UsageCounter, dayOf } from './usage-counter.ts';
import { buildUsageReport, type UsageReport } from './usage-report.ts';
import { dayRows, minuteRows, pruneMinutes, writeUsageBatch } from './usage-store.ts';
import { identitiesOf, insertIdentity, insertUser, raiseTier, userByEmail, userById, userByIdentity } from './users.ts';

export type { ResolvedKey } from './key-cache.ts';

export interface AccountsOptions {
  /** Clock (tests move it). */
  now?: () => number;
  /** How often pending usage is written; a crash loses at most this much usage. Default 5 s; 0 disables the timer. */
  flushIntervalMs?: number;
  /** How often to look for writes by other processes (the keys script) and reload the key cache. Default 1 s; 0 disables. */
  syncIntervalMs?: number;
  /** Session lifetime since last rotation. Default 30 days. */
  sessionTtlMs?: number;
  /** Age after which a session id is replaced by a new one. Default 24 h. */
  sessionRotateMs?: number;
  /** How long per-minute usage rows are kept. Default 48 h. */
  minuteRetentionMs?: number;
}

/** Default name of the key made at first sign-in. */
export const FIRST_KEY_NAME = 'Default key';
/** How long a rotated-out session id keeps working, for requests already in flight. */
const ROTATION_GRACE_MS = 60_000;
/** How long a first key waits in memory for the dashboard to show it. */
const REVEAL_TTL_MS = 10 * 60_000;

/** Opens the accounts database at `dbPath` (`:memory:` for tests), migrates it and loads the key cache. */
export function openAccounts(dbPath: string, options: AccountsOptions = {}): AccountStore {
  return new AccountStore(openDatabase(dbPath), options);
}

/** Accounts, keys, sessions and usage over one SQLite database. */
export class AccountStore {
  private readonly sqlite: Database;
  private readonly db: AccountsDb;
  private readonly now: () => number;
  private readonly cache = new KeyCache();
  private readonly usage = new UsageCounter();
  /** Session id hash -> secret of the first key, awaiting its one showing. */
  private readonly reveals = new Map<string, { secret: string; until: number }>();
  private readonly timers: ReturnType<typeof setInterval>[] = [];
  private readonly sessionTtlMs: number;
  private readonly sessionRotateMs: number;
  private readonly minuteRetentionMs: number;
  private seenDataVersion: number;
  private lastPruneAt = 0;
  private closed = false;

  constructor(opened: { sqlite: Database; db: AccountsDb }, options: AccountsOptions) {
    this.sqlite = opened.sqlite;
    this.db = opened.db;
    this.now = options.now ?? Date.now;
    this.sessionTtlMs = options.sessionTtlMs ?? 30 * DAY_MS;
    this.sessionRotateMs = options.sessionRotateMs ?? DAY_MS;
    this.minuteRetentionMs = options.minuteRetentionMs ?? 2 * DAY_MS;
    this.reloadKeys();
    this.seenDataVersion = dataVersion(this.sqlite);
    const flushMs = options.flushIntervalMs ?? 5_000;
    const syncMs = options.syncIntervalMs ?? 1_000;
    if (flushMs > 0) this.timers.push(setInterval(() => this.flushQuietly(), flushMs));
    if (syncMs > 0) this.timers.push(setInterval(() => this.syncQuietly(), syncMs));
    // Timers must not keep a finished process (the keys script, tests) alive.
    for (const t of this.timers) (t as { unref?: () => void }).unref?.();
  }

  // ---- hot path -------------------------------------------------------

  /** Resolves an `X-API-Key` value from memory: the key's id, owner and tier, or null when unknown or revoked. */
  resolveApiKey(rawKey: string): ResolvedKey | null {
    // Equality is a Map lookup on the SHA-256, not on the secret: timing can
    // at most reveal hash prefixes, which do not help forge a key.
    if (!isApiKeyShaped(rawKey)) return null;
    return this.cache.get(hashSecret(rawKey));
  }

  /** Counts one request made with a key (memory only; written at the next flush). */
  recordUsage(keyId: string, at: number = this.now()): void {
    this.usage.record(keyId, at);
  }

  // ---- users ----------------------------------------------------------

  /** A user by id, or null. */
  getUser(userId: string): UserRecord | null {
    return userById(this.db, userId);
  }

  /** A user by (normalised) email, or null. */
  findUserByEmail(email: string): UserRecord | null {
    return userByEmail(this.db, email);
  }

  /** Provider identities linked to a user. */
  identitiesOf(userId: string): { provider: string; email: string | null; createdAt: number }[] {
    return identitiesOf(this.db, userId);
  }

  /**
   * Operator path (keys script): the user with this email (created when
   * missing), raised to `tier`, and a new key of `tier` — in one transaction.
   */
  grantKeyByEmail(email: string, tier: KeyTier, name: string): { user: UserRecord; created: CreatedKey; newUser: boolean } {
    const now = this.now();
    const result = this.db.transaction((tx) => {
      const existing = userByEmail(tx, email);
      const user = raiseTier(tx, existing ?? insertUser(tx, { email, name: null, tier }, now), tier);
      const created = insertKey(tx, user.id, name, tier, now);
      return { user, created, newUser: existing === null };
    });
    this.cache.add(result.created.secretHash, { keyId: result.created.key.id, userId: result.user.id, tier });
    return { user: result.user, created: stripHash(result.created), newUser: result.newUser };
  }

  /**
   * OAuth sign-in: finds the user of a provider identity, or links it to the
   * user with the same verified email, or creates a user. A user without an
   * active key gets a free one (returned once as `firstKey`).
   */
  signIn(profile: ProviderProfile): SignInResult {
    const now = this.now();
    const result = this.db.transaction((tx) => {
      const known = userByIdentity(tx, profile.provider, profile.subject);
      if (known) return { user: known, newUser: false, firstKey: null };
      const byEmail = profile.email && profile.emailVerified ? userByEmail(tx, profile.email) : null;
      // An unverified address must not claim a row's email (it could be someone else's).
      const email = profile.email && profile.emailVerified && !byEmail ? profile.email : null;
      const user = byEmail ?? insertUser(tx, { email, name: profile.name, tier: 'free' }, now);
      insertIdentity(tx, user.id, profile, now);
      const firstKey = hasActiveKey(tx, user.id) ? null : insertKey(tx, user.id, FIRST_KEY_NAME, user.tier, now);
      return { user, newUser: byEmail === null, firstKey };
    });
    if (result.firstKey) {
      this.cache.add(result.firstKey.secretHash, { keyId: result.firstKey.key.id, userId: result.user.id, tier: result.firstKey.key.tier });
    }
    return { user: result.user, newUser: result.newUser, firstKey: result.firstKey ? stripHash(result.firstKey) : null };
  }

  // ---- keys -----------------------------------------------------------

  /** Creates a key for a user (the caller checks the tier is allowed); the secret is in the result only. */
  createKey(userId: string, name: string, tier: KeyTier): CreatedKey {
    const created = this.db.transaction((tx) => insertKey(tx, userId, name, tier, this.now()));
    this.cache.add(created.secretHash, { keyId: created.key.id, userId, tier });
    return stripHash(created);
  }

  /** A user's keys (revoked included), with last-use times not yet flushed merged in. */
  listKeys(userId: string): KeyRecord[] {
    return keysOfUser(this.db, userId).map((k) => this.withPendingLastUse(k));
  }

  /** One key by id, or null. */
  getKey(keyId: string): KeyRecord | null {
    const k = keyById(this.db, keyId);
    return k ? this.withPendingLastUse(k) : null;
  }

  /**
   * Revokes a key at once: the row is written first and the cache entry
   * dropped after commit, so a failed write never leaves the two disagreeing.
   * With `ownerId`, another user's key is reported as absent. Returns the
   * key, or null when not found.
   */
  revokeKey(keyId: string, ownerId?: string): KeyRecord | null {
    const key = this.db.transaction((tx) => {
      const k = keyById(tx, keyId);
      if (!k || (ownerId !== undefined && k.userId !== ownerId)) return null;
      markRevoked(tx, keyId, this.now());
      return keyById(tx, keyId);
    });
    if (key) this.cache.removeById(keyId);
    return key;
  }

  // ---- sessions -------------------------------------------------------

  /** Starts a session for a user; returns the cookie token (never stored) and its expiry. */
  createSession(userId: string): { token: string; expiresAt: number } {
    const { token, row } = this.db.transaction((tx) => insertSession(tx, userId, this.now(), this.sessionTtlMs));
    return { token, expiresAt: row.expiresAt };
  }

  /** The session of a cookie token, rotating its id when old enough; null when unknown or expired. */
  validateSession(token: string): SessionRecord | null {
    if (token.length === 0 || token.length > 128) return null;
    const now = this.now();
    return this.db.transaction((tx) => {
      const row = sessionByToken(tx, token);
      if (!row) return null;
      if (row.expiresAt <= now) {
        deleteSessionByHash(tx, row.idHash);
        return null;
      }
      const user = userById(tx, row.userId);
      if (!user) return null;
      if (now - row.rotatedAt < this.sessionRotateMs) return { user, expiresAt: row.expiresAt, rotated: null };
      const next = insertSession(tx, row.userId, now, this.sessionTtlMs, row.createdAt);
      retireSession(tx, row, now, ROTATION_GRACE_MS);
      return { user, expiresAt: next.row.expiresAt, rotated: { token: next.token, expiresAt: next.row.expiresAt } };
    });
  }

  /** Ends the session of a cookie token (no-op when unknown). */
  deleteSession(token: string): void {
    const idHash = hashSecret(token);
    this.reveals.delete(idHash);
    this.db.transaction((tx) => deleteSessionByHash(tx, idHash));
  }

  /** Keeps a first key's secret in memory only (never on disk) until the session's next dashboard view. */
  holdKeyForReveal(sessionToken: string, secret: string): void {
    const now = this.now();
    for (const [h, r] of this.reveals) if (r.until <= now) this.reveals.delete(h);
    this.reveals.set(hashSecret(sessionToken), { secret, until: now + REVEAL_TTL_MS });
  }

  /** Takes (and forgets) the secret held for a session: shown once. */
  takeKeyForReveal(sessionToken: string): string | null {
    const idHash = hashSecret(sessionToken);
    const r = this.reveals.get(idHash);
    this.reveals.delete(idHash);
    return r && r.until > this.now() ? r.secret : null;
  }

  // ---- usage ----------------------------------------------------------

  /** Requests per key of a user over the last hour / day / 30 days, unflushed counts included. */
  usageReport(userId: string): UsageReport {
    const now = this.now();
    const keys = this.listKeys(userId);
    const ids = keys.map((k) => k.id);
    const minutes = groupCounts(minuteRows(this.db, ids, now - DAY_MS - 3_600_000).map((r) => [r.keyId, r.minute, r.count]));
    const days = groupCounts(dayRows(this.db, ids, dayOf(now) - 30 * DAY_MS).map((r) => [r.keyId, r.day, r.count]));
    for (const id of ids) {
      for (const [minute, count] of this.usage.pendingOf(id)) {
        addCount(minutes, id, minute, count);
        addCount(days, id, dayOf(minute), count);
      }
    }
    return buildUsageReport(keys, minutes, days, now);
  }

  /** Writes pending usage in one transaction; on failure the counts are kept for the next try. */
  flush(): void {
    if (this.closed) return;
    const now = this.now();
    const prune = now - this.lastPruneAt > 3_600_000;
    if (this.usage.isEmpty() && !prune) return;
    const batch = this.usage.drain();
    try {
      this.db.transaction((tx) => {
        writeUsageBatch(tx, batch);
        if (prune) {
          pruneMinutes(tx, now - this.minuteRetentionMs);
          purgeExpiredSessions(tx, now);
        }
      });
      if (prune) this.lastPruneAt = now;
    } catch (err) {
      this.usage.restore(batch);
      throw err;
    }
  }

  /** Reloads the key cache when another process (the keys script) committed changes. */
  syncFromDisk(): void {
    if (this.closed) return;
    const v = dataVersion(this.sqlite);
    if (v === this.seenDataVersion) return;
    this.seenDataVersion = v;
    this.reloadKeys();
  }

  /** Flushes pending usage, stops timers and closes the database. */
  close(): void {
    if (this.closed) return;
    for (const t of this.timers) clearInterval(t);
    this.reveals.clear();
    try {
      this.flush();
    } finally {
      this.closed = true;
      this.sqlite.close();
    }
  }

  private reloadKeys(): void {
    this.cache.replaceAll(activeKeyHashes(this.db));
  }

  private withPendingLastUse(k: KeyRecord): KeyRecord {
    const pending = this.usage.pendingLastUsed(k.id);
    return pending !== null && pending > (k.lastUsedAt ?? 0) ? { ...k, lastUsedAt: pending } : k;
  }

  private flushQuietly(): void {
    try {
      this.flush();
    } catch (err) {
      // Counts stay in memory and are retried; the message names no secret.
      console.error(`accounts: usage flush failed: ${(err as Error).message}`);
    }
  }

  private syncQuietly(): void {
    try {
      this.syncFromDisk();
    } catch (err) {
      console.error(`accounts: key cache sync failed: ${(err as Error).message}`);
    }
  }
}

/** Drops the hash from an internal created-key record. */
function stripHash(c: CreatedKey & { secretHash: string }): CreatedKey {
  return { key: c.key, secret: c.secret };
}

/** Groups [keyId, bucket, count] triples into nested maps. */
function groupCounts(rows: [string, number, number][]): Map<string, Map<number, number>> {
  const out = new Map<string, Map<number, number>>();
  for (const [id, bucket, count] of rows) addCount(out, id, bucket, count);
  return out;
}

/** Adds a count into nested maps. */
function addCount(into: Map<string, Map<number, number>>, id: string, bucket: number, count: number): void {
  let m = into.get(id);
  if (!m) into.set(id, (m = new Map()));
  m.set(bucket, (m.get(bucket) ?? 0) + count);
}
