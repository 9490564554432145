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

/** Active keys by secret hash, plus the reverse index used on revoke. */
export class KeyCache {
  private byHash = new Map<string, ResolvedKey>();
  private hashById = new Map<string, string>();

  /** Replaces the whole content (load at open, reload after outside writes). */
  replaceAll(entries: Iterable<{ secretHash: string } & ResolvedKey>): void {
    this.byHash = new Map();
    this.hashById = new Map();
    for (const e of entries) this.add(e.secretHash, { keyId: e.keyId, userId: e.userId, tier: e.tier });
  }

  /** Adds one active key. */
  add(secretHash: string, entry: ResolvedKey): void {
    this.byHash.set(secretHash, Object.freeze({ ...entry }));
    this.hashById.set(entry.keyId, secretHash);
  }

  /** Removes a key by id (revocation). */
  removeById(keyId: string): void {
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
}
