/**
 * Decision policy 2026-11.3, the built-in default: 2026-11.2's data, under
 * which the `privacy_relay_no_block` guardrail keeps relay egress at
 * `monitor` or below on every surface (relay users are ordinary browser
 * users). Pure data: change it only with a new policy_version (see docs/scoring.md).
 */
import { POLICY_2026_11_2 } from './policy-2026-11.2.ts';
import type { Policy } from './schema.ts';

/** Policy 2026-11.3 as data. */
export const POLICY_2026_11_3: Policy = { ...POLICY_2026_11_2, policy_version: '2026-11.3' };
