/**
 * Decision policy 2026-11.2 (the default before 2026-11.3): 2026-11.1 with the
 * `unknown` profile (no network-type evidence) trusted like an ordinary
 * address, since absence of evidence is not evidence of risk. Pure data:
 * change it only with a new policy_version (see docs/scoring.md).
 */
import { POLICY_2026_11_1 } from './policy-2026-11.1.ts';
import type { Policy } from './schema.ts';

/** Policy 2026-11.2 as data. */
export const POLICY_2026_11_2: Policy = {
  ...POLICY_2026_11_1,
  policy_version: '2026-11.2',
  profiles: {
    ...POLICY_2026_11_1.profiles,
    residential: { role: 'residential', trust: 60, description: 'Access ISP address' },
    unknown: { role: 'unknown', trust: 60, description: 'Address of no known network type' },
  },
};
