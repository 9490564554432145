/**
 * The decision engine (spec 2.2): profile, sub-scores, one expected-loss
 * choice per surface under the policy, guardrails and the explanation.
 * Advisory only: it reads the score and never changes it.
 */
import type { IndexRecord } from '../../index/record.ts';
import { networkContext } from '../classify.ts';
import { coverageNote, FULL_COVERAGE, type Coverage } from '../coverage.ts';
import type { GuardrailName, Policy } from '../policy/schema.ts';
import { traceScore } from '../score.ts';
import {
  SURFACES,
  type Classification,
  type Decision,
  type DecisionObjects,
  type Evidence,
  type Level,
  type Profile,
  type Scenarios,
  type Score,
  type ScoreTrace,
  type SubScores,
  type Surface,
} from '../types.ts';
import { buildExplanation } from './explain.ts';
import {
  abuseLikelihood,
  actionsOf,
  chooseAction,
  compileSurface,
  levelOf,
  lossOf,
  marginLevel,
  minLevel,
  qualityLevel,
  type ActionMask,
  type Choice,
  type CompiledSurface,
} from './expected-loss.ts';
import { GUARDRAILS, activeGuardrails, permittedActions, type DecisionSurface, type Guardrail } from './guardrails.ts';
import { assignProfile } from './profile.ts';
import { computeSubScores } from './subscores.ts';

type CompiledPolicy = Record<DecisionSurface, CompiledSurface>;
const compiledPolicies = new WeakMap<Policy, CompiledPolicy>();

/** The policy's surfaces as flat arrays, compiled once per policy object. */
function compiled(policy: Policy): CompiledPolicy {
  let c = compiledPolicies.get(policy);
  if (!c) {
    c = {} as CompiledPolicy;
    for (const s of Object.keys(policy.surfaces) as DecisionSurface[]) c[s] = compileSurface(policy.surfaces[s]);
    compiledPolicies.set(policy, c);
  }
  return c;
}

/** 0.4567 → "0.46": two decimals from integer arithmetic (double-to-string conversion is the slow part). */
function num(x: number): string {
  const n = Math.round(x * 100);
  const whole = Math.floor(n / 100);
  const frac = n - whole * 100;
  return `${whole}${frac < 10 ? '.0' : '.'}${frac}`;
}
const pct = (p: number) => `${Math.round(p * 100)}%`;

export interface SurfaceOutcome {
  p: number;
  choice: Choice;
  offered: ActionMask;
  permitted: ActionMask;
  enforced: readonly GuardrailName[];
  yielded: readonly GuardrailName[];
}

const NO_NAMES: readonly GuardrailName[] = [];

function planSurface(surface: DecisionSurface, cs: CompiledSurface, policy: Policy, subs: SubScores, active: Guardrail[]): SurfaceOutcome {
  const p = abuseLikelihood(cs.model, subs, policy.likelihood_bounds);
  if (active.length === 0) {
    return { p, choice: chooseAction(cs, p, cs.offered), offered: cs.offered, permitted: cs.offered, enforced: NO_NAMES, yielded: NO_NAMES };
  }
  const g = permittedActions(surface, cs.offered, active);
  return { p, choice: chooseAction(cs, p, g.actions), offered: cs.offered, permitted: g.actions, enforced: g.enforced, yielded: g.yielded };
}

function scenarioReason(o: SurfaceOutcome): string {
  const c = o.choice;
  const base = c.runnerUp
    ? `${c.action}: expected loss ${num(c.loss)} vs ${c.runnerUp.action} ${num(c.runnerUp.loss)} at ${pct(o.p)} estimated abuse likelihood`
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
export function planDecision(
  record: IndexRecord,
  classification: Classification,
  evidence: Evidence,
  score: Score,
  policy: Policy,
  knownTrace?: ScoreTrace,
  coverage: Coverage = FULL_COVERAGE,
): DecisionPlan {
  const trace = knownTrace ?? traceScore(evidence, coverage, record.override);
  if (trace.score.risk_score !== score.risk_score) throw new Error('decide: score does not match the evidence');
  const { profile, because } = assignProfile(record, classification);
  const subs = computeSubScores(record, classification, trace, profile, policy, coverage);
  const active = activeGuardrails(record, classification, profile, policy);
  const cp = compiled(policy);
  const surfaces = {} as Record<Surface, SurfaceOutcome>;
  for (const surface of SURFACES) surfaces[surface] = planSurface(surface, cp[surface], policy, subs, active);
  return {
    trace,
    profile,
    because,
    subs,
    active,
    quality: qualityLevel(subs.evidence_quality_score, policy.confidence),
    general: planSurface('general', cp.general, policy, subs, active),
    surfaces,
  };
}

/**
 * Spec 2.2 decision, scores, scenarios and explanation for a classified, scored record.
 * `trace` (from traceScore of the same evidence) saves recomputing it when the caller has it;
 * `coverage` is the index's (what it holds, what is stale), said in the summary.
 */
export function decide(
  record: IndexRecord,
  classification: Classification,
  evidence: Evidence,
  score: Score,
  policy: Policy,
  knownTrace?: ScoreTrace,
  coverage: Coverage = FULL_COVERAGE,
): DecisionObjects {
  const plan = planDecision(record, classification, evidence, score, policy, knownTrace, coverage);
  const { trace, profile, because, subs, quality, general } = plan;
  const profilePolicy = policy.profiles[profile];

  // Guardrails that constrained some surface, in priority order; those that had to yield are noted.
  let acted = 0;
  let yieldNotes: string[] | null = null;
  for (let k = -1; k < SURFACES.length; k++) {
    const surface: DecisionSurface = k < 0 ? 'general' : SURFACES[k];
    const o = k < 0 ? general : plan.surfaces[SURFACES[k]];
    for (const g of o.enforced) acted |= 1 << GUARDRAIL_INDEX[g];
    for (const g of o.yielded) (yieldNotes ??= []).push(`guardrail ${g} yielded on ${surface}`);
  }
  const guardrails: string[] = [];
  const decisionChain: string[] = [`profile ${profile} (role ${profilePolicy.role}): ${because}`];
  for (let i = 0; i < GUARDRAILS.length; i++) {
    if (!(acted & (1 << i))) continue;
    guardrails.push(GUARDRAILS[i].name);
    decisionChain.push(GUARDRAIL_LINES[i]);
  }
  if (yieldNotes) decisionChain.push(...yieldNotes);

  const scenarios = {} as Scenarios;
  for (const surface of SURFACES) {
    const o = plan.surfaces[surface];
    scenarios[surface] = {
      action: o.choice.action,
      risk_level: levelOf(o.p, policy.likelihood_levels),
      // The scenario's own margin, bounded by how complete the evidence is.
      confidence: minLevel(marginLevel(o.choice, policy.confidence), quality),
      reason: scenarioReason(o),
    };
  }

  const cs = compiled(policy).general;
  const limit = general.choice.loss + policy.allowed_tolerance * cs.scale;
  let allowedMask = 0;
  for (let i = 0; i < cs.ifBad.length; i++) {
    if (general.permitted & (1 << i) && lossOf(cs, general.p, i) <= limit) allowedMask |= 1 << i;
  }
  const allowed = actionsOf(allowedMask);
  const blocked = actionsOf(general.offered & ~general.permitted);
  const decision: Decision = {
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

  decisionChain.push(
    `policy ${policy.policy_version}: ${decision.action} at ${pct(general.p)} estimated abuse likelihood; allowed ${allowed.join(', ')}`,
  );
  const operator = networkContext(record, classification).operator;
  // What the index cannot tell is part of the answer: "No Tor, VPN or threat data loaded."
  const note = [overrideNote(record), coverageNote(coverage)].filter(Boolean).join(' ');
  const explanation = buildExplanation({
    trace,
    score,
    summary: `${profilePolicy.description}${operator ? ` (${operator})` : ''}: risk ${score.risk_score}/100 (${score.band}); advised action ${decision.action}.${note ? ` ${note}` : ''}`,
    fallbackReason: because,
    guardrails: guardrails.slice(),
    decisionChain,
  });
  return { decision, scores: subs, scenarios, explanation };
}

/** What the explanation says of an operator override covering the address (empty without one). */
function overrideNote(record: IndexRecord): string {
  const o = record.override;
  if (o === undefined) return '';
  return `An operator override applies to ${o.cidr}${o.note ? ` (${o.note})` : ''}.`;
}

const GUARDRAIL_INDEX = Object.fromEntries(GUARDRAILS.map((g, i) => [g.name, i])) as Record<GuardrailName, number>;
const GUARDRAIL_LINES = GUARDRAILS.map((g) => `guardrail ${g.name}: ${g.rule}`);
