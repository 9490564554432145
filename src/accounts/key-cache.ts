/**
 * In-memory map from SHA-256 of an API key to what it grants, so that
 * resolving `X-API-Key` on the hot path costs one hash and one Map lookup.
 */
import type { Tier } from '../tiers.ts';

/** What a valid key resolves to. */
export interface ResolvedKey {
  keyId: string;
  userId: string;
  tier: Tier;
}

/**
 * How many revoked ids are remembered. The memory only has to outlast a sync
 * that started before the revocation (syncs run one at a time), so the
 * oldest ids can go: the set cannot grow with every revocation for ever.
 */
export const DEFAULT_MAX_REVOKED_IDS = 10_000;

/** Active keys by secret hash, plus the reverse index used on revoke. */
export class KeyCache {
  private byHash = new Map<string, ResolvedKey>();
  private hashById = new Map<string, string>();
  /**
   * Ids of keys seen revoked, oldest first. Revocation is final, so a read
   * that started before the revoke committed (a sync running concurrently)
   * must never put the key back.
   */
  private readonly revoked = new Set<string>();

  constructor(private readonly maxRevokedIds: number = DEFAULT_MAX_REVOKED_IDS) {}

  /** Replaces the whole content with the active keys (load at open). */
  replaceAll(entries: Iterable<{ secretHash: string } & ResolvedKey>): void {
    this.byHash = new Map();
    this.hashById = new Map();
    for (const e of entries) this.add(e.secretHash, { keyId: e.keyId, userId: e.userId, tier: e.tier });
  }

  /** Applies keys created or revoked elsewhere (incremental sync). */
  apply(changes: Iterable<{ secretHash: string; revoked: boolean } & ResolvedKey>): void {
    for (const c of changes) {
      if (c.revoked) this.removeById(c.keyId);
      else this.add(c.secretHash, { keyId: c.keyId, userId: c.userId, tier: c.tier });
    }
  }

  /** Adds one active key (ignored when the key was already seen revoked). */
  add(secretHash: string, entry: ResolvedKey): void {
    if (this.revoked.has(entry.keyId)) return;
    this.byHash.set(secretHash, Object.freeze({ ...entry }));
    this.hashById.set(entry.keyId, secretHash);
  }

  /** Removes a key by id, for good (revocation). */
  removeById(keyId: string): void {
    this.revoked.add(keyId);
    if (this.revoked.size > this.maxRevokedIds) this.revoked.delete(this.revoked.values().next().value!);
    const hash = this.hashById.get(keyId);
    if (hash === undefined) return;
    this.hashById.delete(keyId);
    this.byHash.delete(hash);
  }

  /** The entry of a secret hash, or null. */
  get(secretHash: string): ResolvedKey | null {
    return this.byHash.get(secretHash) ?? null;
  }

  /** Number of active keys cached. */
  get size(): number {
    return this.byHash.size;
  }

  /** Number of revoked ids remembered (bounded by the constructor's limit). */
  get revokedCount(): number {
    return this.revoked.size;
  }
}
