/**
 * Guardrails: named rules that restrict which actions the expected-loss
 * choice may pick on some surfaces, whatever the costs say. Listed in
 * priority order: a later guardrail that would leave no action yields.
 */
import { Flag, type IndexRecord } from '../../index/record.ts';
import type { GuardrailName, Policy } from '../policy/schema.ts';
import type { Action, Classification, Profile, Surface } from '../types.ts';

/** A surface of the policy: the six scenario surfaces plus `general` (decision.action). */
export type DecisionSurface = Surface | 'general';

const ALL: readonly DecisionSurface[] = ['general', 'content', 'seo_crawler', 'login', 'signup', 'payment', 'api'];

export interface Guardrail {
  name: GuardrailName;
  /** Why it exists, for the reason chain. */
  rule: string;
  matches(record: IndexRecord, c: Classification, profile: Profile): boolean;
  surfaces: readonly DecisionSurface[];
  permits(action: Action): boolean;
}

export const GUARDRAILS: readonly Guardrail[] = [
  {
    name: 'verified_crawler_protection',
    rule: 'a DNS-verified crawler is never challenged or blocked on content or seo_crawler',
    matches: (_r, c) => c.is_verified_crawler,
    surfaces: ['content', 'seo_crawler'],
    permits: (a) => a === 'allow' || a === 'monitor',
  },
  {
    name: 'bogon_block',
    rule: 'traffic from non-routable space is spoofed or misrouted and is blocked',
    matches: (_r, _c, p) => p === 'bogon',
    surfaces: ALL,
    permits: (a) => a === 'block',
  },
  {
    name: 'privacy_relay_no_block',
    rule: 'shared privacy relay egress carries many ordinary users and is never blocked outright',
    matches: (_r, c) => c.is_privacy_relay,
    surfaces: ALL,
    permits: (a) => a !== 'block',
  },
  {
    name: 'threat_listed_step_up',
    rule: 'a threat-listed address is never simply allowed or monitored on account, payment or API surfaces',
    matches: (r) => (r.flags & (Flag.DROP | Flag.THREAT_LIST | Flag.THREAT_FEED)) !== 0,
    surfaces: ['general', 'login', 'signup', 'payment', 'api'],
    permits: (a) => a !== 'allow' && a !== 'monitor',
  },
];

/** The guardrails the policy enables whose condition holds for this record. */
export function activeGuardrails(record: IndexRecord, c: Classification, profile: Profile, policy: Policy): Guardrail[] {
  return GUARDRAILS.filter((g) => policy.guardrails[g.name] && g.matches(record, c, profile));
}

/** The offered actions that survive the active guardrails on a surface, and which guardrails acted. */
export function permittedActions(
  surface: DecisionSurface,
  offered: readonly Action[],
  active: readonly Guardrail[],
): { actions: Action[]; enforced: GuardrailName[]; yielded: GuardrailName[] } {
  let actions = offered.slice();
  const enforced: GuardrailName[] = [];
  const yielded: GuardrailName[] = [];
  for (const g of active) {
    if (!g.surfaces.includes(surface)) continue;
    const kept = actions.filter(g.permits);
    if (kept.length === 0) {
      yielded.push(g.name);
      continue;
    }
    actions = kept;
    enforced.push(g.name);
  }
  return { actions, enforced, yielded };
}
