/**
 * The decision engine (spec 2.2): profile, sub-scores, one expected-loss
 * choice per surface under the policy, guardrails and the explanation.
 * Advisory only: it reads the score and never changes it.
 */
import type { IndexRecord } from '../../index/record.ts';
import { networkContext } from '../classify.ts';
import type { GuardrailName, Policy } from '../policy/schema.ts';
import { traceScore } from '../score.ts';
import {
  ACTIONS,
  SURFACES,
  type Action,
  type Classification,
  type DecisionObjects,
  type Evidence,
  type Level,
  type Profile,
  type Scenario,
  type Scenarios,
  type Score,
  type ScoreTrace,
  type SubScores,
  type Surface,
} from '../types.ts';
import { buildExplanation } from './explain.ts';
import { abuseLikelihood, chooseAction, levelOf, marginLevel, minLevel, qualityLevel, type Choice } from './expected-loss.ts';
import { activeGuardrails, permittedActions, type DecisionSurface, type Guardrail } from './guardrails.ts';
import { assignProfile } from './profile.ts';
import { computeSubScores } from './subscores.ts';

const pct = (p: number) => `${Math.round(p * 100)}%`;

export interface SurfaceOutcome {
  p: number;
  choice: Choice;
  permitted: Action[];
  enforced: GuardrailName[];
  yielded: GuardrailName[];
}

function planSurface(surface: DecisionSurface, policy: Policy, subs: SubScores, active: Guardrail[]): SurfaceOutcome {
  const sp = policy.surfaces[surface];
  const offered = ACTIONS.filter((a) => sp.actions[a] !== undefined);
  const { actions, enforced, yielded } = permittedActions(surface, offered, active);
  const p = abuseLikelihood(sp, subs, policy.likelihood_bounds);
  return { p, choice: chooseAction(sp, p, actions), permitted: actions, enforced, yielded };
}

function scenarioReason(o: SurfaceOutcome): string {
  const c = o.choice;
  const base = c.runnerUp
    ? `${c.action}: expected loss ${c.loss.toFixed(2)} vs ${c.runnerUp.action} ${c.runnerUp.loss.toFixed(2)} at ${pct(o.p)} estimated abuse likelihood`
    : `${c.action}: the only permitted action at ${pct(o.p)} estimated abuse likelihood`;
  return o.enforced.length > 0 ? `${base}; guardrail ${o.enforced.join(', ')}` : base;
}

/** Everything the decision objects are built from: profile, sub-scores and one choice per surface. */
export interface DecisionPlan {
  trace: ScoreTrace;
  profile: Profile;
  because: string;
  subs: SubScores;
  active: Guardrail[];
  /** Confidence the evidence quality score allows. */
  quality: Level;
  general: SurfaceOutcome;
  surfaces: Record<Surface, SurfaceOutcome>;
}

/** The expected-loss plan behind decide(): exposed so tests and tools can see the margins. */
export function planDecision(record: IndexRecord, classification: Classification, evidence: Evidence, score: Score, policy: Policy): DecisionPlan {
  const trace = traceScore(evidence);
  if (trace.score.risk_score !== score.risk_score) throw new Error('decide: score does not match the evidence');
  const { profile, because } = assignProfile(record, classification);
  const subs = computeSubScores(record, classification, trace, profile, policy);
  const active = activeGuardrails(record, classification, profile, policy);
  const surfaces = {} as Record<Surface, SurfaceOutcome>;
  for (const surface of SURFACES) surfaces[surface] = planSurface(surface, policy, subs, active);
  return {
    trace,
    profile,
    because,
    subs,
    active,
    quality: qualityLevel(subs.evidence_quality_score, policy.confidence),
    general: planSurface('general', policy, subs, active),
    surfaces,
  };
}

/** Spec 2.2 decision, scores, scenarios and explanation for a classified, scored record. */
export function decide(record: IndexRecord, classification: Classification, evidence: Evidence, score: Score, policy: Policy): DecisionObjects {
  const plan = planDecision(record, classification, evidence, score, policy);
  const { trace, profile, because, subs, active, quality, general } = plan;
  const profilePolicy = policy.profiles[profile];
  const guardrailNames = new Set<GuardrailName>(general.enforced);
  const yieldNotes: string[] = general.yielded.map((g) => `guardrail ${g} yielded on general`);
  const scenarios = {} as Scenarios;
  for (const surface of SURFACES) {
    const o = plan.surfaces[surface];
    for (const g of o.enforced) guardrailNames.add(g);
    for (const g of o.yielded) yieldNotes.push(`guardrail ${g} yielded on ${surface}`);
    const scenario: Scenario = {
      action: o.choice.action,
      risk_level: levelOf(o.p, policy.likelihood_levels),
      // The scenario's own margin, bounded by how complete the evidence is.
      confidence: minLevel(marginLevel(o.choice, policy.confidence), quality),
      reason: scenarioReason(o),
    };
    scenarios[surface] = scenario;
  }

  const tolerance = policy.allowed_tolerance * general.choice.scale;
  const allowed = general.choice.losses.filter((l) => l.loss <= general.choice.loss + tolerance).map((l) => l.action);
  const offeredGeneral = ACTIONS.filter((a) => policy.surfaces.general.actions[a] !== undefined);
  const blocked = offeredGeneral.filter((a) => !general.permitted.includes(a));
  const guardrails = GUARDRAIL_ORDER.filter((g) => guardrailNames.has(g));
  const decision = {
    profile,
    role: profilePolicy.role,
    action: general.choice.action,
    risk_level: levelOf(score.risk_score, policy.risk_levels),
    confidence: minLevel(minLevel(classification.confidence, quality), marginLevel(general.choice, policy.confidence)),
    policy_version: policy.policy_version,
    allowed_actions: allowed,
    blocked_actions: blocked.length > 0 ? blocked : null,
    guardrails_applied: guardrails,
  };

  const operator = networkContext(record, classification).operator;
  const decisionChain = [
    `profile ${profile} (role ${profilePolicy.role}): ${because}`,
    ...active.filter((g) => guardrailNames.has(g.name)).map((g) => `guardrail ${g.name}: ${g.rule}`),
    ...yieldNotes,
    `policy ${policy.policy_version}: ${decision.action} at ${pct(general.p)} estimated abuse likelihood; allowed ${allowed.join(', ')}`,
  ];
  const explanation = buildExplanation({
    trace,
    score,
    summary: `${profilePolicy.description}${operator ? ` (${operator})` : ''}: risk ${score.risk_score}/100 (${score.band}); advised action ${decision.action}.`,
    fallbackReason: because,
    guardrails,
    decisionChain,
  });
  return { decision, scores: subs, scenarios, explanation };
}

const GUARDRAIL_ORDER: readonly GuardrailName[] = ['verified_crawler_protection', 'bogon_block', 'privacy_relay_no_block', 'threat_listed_step_up'];
