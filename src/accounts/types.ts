/** Records the accounts module hands out (times are Unix ms; JSON views live in views.ts). */
import type { Tier } from '../tiers.ts';

/** A tier a key or user can hold (anonymous is the absence of a key). */
export type KeyTier = Exclude<Tier, 'anonymous'>;

export interface UserRecord {
  id: string;
  email: string | null;
  name: string | null;
  tier: KeyTier;
  createdAt: number;
}

export interface KeyRecord {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  tier: KeyTier;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

/** A just-created key: the only moment its secret exists outside the caller's hands. */
export interface CreatedKey {
  key: KeyRecord;
  secret: string;
}

/** What an identity provider told us about the person signing in. */
export interface ProviderProfile {
  provider: string;
  subject: string;
  email: string | null;
  /** Only a verified email may link to an existing account. */
  emailVerified: boolean;
  name: string | null;
}

export interface SignInResult {
  user: UserRecord;
  newUser: boolean;
  /** The key made at first sign-in, to show once. */
  firstKey: CreatedKey | null;
}

export interface SessionRecord {
  user: UserRecord;
  expiresAt: number;
  /** Set when the id was rotated: the cookie must be replaced with this token. */
  rotated: { token: string; expiresAt: number } | null;
}
