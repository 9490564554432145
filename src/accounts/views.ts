/** Pure: the JSON shapes of accounts data, shared by /auth/* and the keys script. */
import { TIERS, type Tier } from '../tiers.ts';
import type { Static } from '@sinclair/typebox';
import type { ApiKey, User } from '../contract/service.ts';
import type { KeyRecord, UserRecord } from './types.ts';

/** ISO time, or null. */
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** A key as /auth/keys shows it (declared in src/contract/service.ts). */
export type KeyView = Static<typeof ApiKey>;

/** A key without its secret (the secret is never stored). */
export function keyView(k: KeyRecord): KeyView {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    tier: k.tier,
    status: k.revokedAt === null ? 'active' : 'revoked',
    created_at: iso(k.createdAt)!,
    last_used_at: iso(k.lastUsedAt),
    revoked_at: iso(k.revokedAt),
  };
}

/** The public profile of a user. */
export function userView(u: UserRecord): Static<typeof User> {
  return { id: u.id, email: u.email, name: u.name, tier: u.tier, created_at: iso(u.createdAt)! };
}

/** Every tier's limits, in the order of spec section 8. */
export function tiersView(): { tier: Tier; requests_per_minute: number; obtained_by: string; features: string[] }[] {
  return (['anonymous', 'free', 'pro'] as const).map((t) => ({
    tier: t,
    requests_per_minute: TIERS[t].requestsPerMinute,
    obtained_by: TIERS[t].obtainedBy,
    features: [...TIERS[t].features],
  }));
}
