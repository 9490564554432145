/**
 * Guardrails: named rules that restrict which actions the expected-loss
 * choice may pick on some surfaces, whatever the costs say. Listed in
 * priority order: a later guardrail that would leave no action yields.
 */
import { Flag, type IndexRecord } from '../../index/record.ts';
import type { GuardrailName, Policy } from '../policy/schema.ts';
import type { Classification, Profile, Surface } from '../types.ts';
import { actionMask, type ActionMask } from './expected-loss.ts';

/** A surface of the policy: the six scenario surfaces plus `general` (decision.action). */
export type DecisionSurface = Surface | 'general';

const ALL: readonly DecisionSurface[] = ['general', 'content', 'seo_crawler', 'login', 'signup', 'payment', 'api'];
const EVERY_ACTION = actionMask(['allow', 'monitor', 'challenge', 'manual_review', 'block']);

export interface Guardrail {
  name: GuardrailName;
  /** Why it exists, for the reason chain. */
  rule: string;
  matches(record: IndexRecord, c: Classification, profile: Profile): boolean;
  surfaces: readonly DecisionSurface[];
  /** The actions it permits on its surfaces. */
  permits: ActionMask;
}

/** Every guardrail, in priority order. */
export const GUARDRAILS: readonly Guardrail[] = [
  {
    name: 'verified_crawler_protection',
    rule: 'a DNS-verified crawler is never challenged or blocked on content or seo_crawler',
    matches: (_r, c) => c.is_verified_crawler,
    surfaces: ['content', 'seo_crawler'],
    permits: actionMask(['allow', 'monitor']),
  },
  {
    name: 'bogon_block',
    rule: 'traffic from non-routable space is spoofed or misrouted and is blocked',
    matches: (_r, _c, p) => p === 'bogon',
    surfaces: ALL,
    permits: actionMask(['block']),
  },
  {
    name: 'privacy_relay_no_block',
    rule: 'shared privacy relay egress carries many ordinary browser users: it is monitored at most, never challenged or blocked',
    matches: (_r, c) => c.is_privacy_relay,
    surfaces: ALL,
    permits: actionMask(['allow', 'monitor']),
  },
  {
    name: 'threat_listed_step_up',
    rule: 'a threat-listed address is never simply allowed or monitored on account, payment or API surfaces',
    matches: (r) => (r.flags & (Flag.DROP | Flag.THREAT_LIST | Flag.THREAT_FEED)) !== 0,
    surfaces: ['general', 'login', 'signup', 'payment', 'api'],
    permits: EVERY_ACTION & ~actionMask(['allow', 'monitor']),
  },
];

/** The guardrails the policy enables whose condition holds for this record. */
export function activeGuardrails(record: IndexRecord, c: Classification, profile: Profile, policy: Policy): Guardrail[] {
  const active: Guardrail[] = [];
  for (const g of GUARDRAILS) if (policy.guardrails[g.name] && g.matches(record, c, profile)) active.push(g);
  return active;
}

const NONE: readonly GuardrailName[] = [];

/** The offered actions that survive the active guardrails on a surface, and which guardrails acted. */
export function permittedActions(
  surface: DecisionSurface,
  offered: ActionMask,
  active: readonly Guardrail[],
): { actions: ActionMask; enforced: readonly GuardrailName[]; yielded: readonly GuardrailName[] } {
  let actions = offered;
  let enforced = NONE;
  let yielded = NONE;
  for (const g of active) {
    if (!g.surfaces.includes(surface)) continue;
    const kept = actions & g.permits;
    if (kept === 0) {
      yielded = [...yielded, g.name];
      continue;
    }
    actions = kept;
    enforced = [...enforced, g.name];
  }
  return { actions, enforced, yielded };
}
