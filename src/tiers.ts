/**
 * The tier table of spec section 8: one source of truth for the rate
 * limiter, /auth/tiers and the keys script.
 */

export type Tier = 'anonymous' | 'free' | 'pro';

export interface TierInfo {
  tier: Tier;
  /** Requests per minute. */
  requestsPerMinute: number;
  /** How the tier is obtained. */
  obtainedBy: string;
  /** Pro-only features this tier unlocks. */
  features: string[];
  /** May ask for answers as of a past moment (`?at=`, docs/http.md): the one rule that gates them. */
  pastAnswers: boolean;
}

export const TIERS: Readonly<Record<Tier, TierInfo>> = {
  anonymous: { tier: 'anonymous', requestsPerMinute: 60, obtainedBy: 'No authentication', features: [], pastAnswers: false },
  free: { tier: 'free', requestsPerMinute: 200, obtainedBy: 'Sign-in and a free key', features: [], pastAnswers: true },
  pro: { tier: 'pro', requestsPerMinute: 600, obtainedBy: 'Reserved; invite-only', features: ['rdap', 'include=rdap_contacts'], pastAnswers: true },
};

/** Whether a string names a tier. */
export function isTier(s: string): s is Tier {
  return s === 'anonymous' || s === 'free' || s === 'pro';
}
