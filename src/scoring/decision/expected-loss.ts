/**
 * Expected-loss choice of an action on one surface: estimate the abuse
 * likelihood p from the sub-scores, then pick the permitted action with the
 * least p × cost_if_bad + (1 − p) × cost_if_good.
 *
 * Surfaces are compiled once per policy into flat arrays and action sets into
 * bitmasks (bit i = ACTIONS[i]), so a decision allocates almost nothing.
 */
import type { Policy, SurfacePolicy } from '../policy/schema.ts';
import { ACTIONS, type Action, type Level, type SubScores } from '../types.ts';

/** A bitmask over ACTIONS. */
export type ActionMask = number;

/** The mask of a list of actions. */
export function actionMask(actions: readonly Action[]): ActionMask {
  let m = 0;
  for (const a of actions) m |= 1 << ACTIONS.indexOf(a);
  return m;
}

/** The actions of a mask, in ACTIONS order (mildest first). */
export function actionsOf(mask: ActionMask): Action[] {
  const out: Action[] = [];
  for (let i = 0; i < ACTIONS.length; i++) if (mask & (1 << i)) out.push(ACTIONS[i]);
  return out;
}

/** A surface policy as flat arrays indexed like ACTIONS. */
export interface CompiledSurface {
  model: SurfacePolicy['abuse_model'];
  ifBad: Float64Array;
  ifGood: Float64Array;
  /** Actions the policy offers on this surface. */
  offered: ActionMask;
  /** The surface's largest cost: the unit of the allowed-actions tolerance. */
  scale: number;
}

/** Flattens one surface of a policy. */
export function compileSurface(sp: SurfacePolicy): CompiledSurface {
  const ifBad = new Float64Array(ACTIONS.length);
  const ifGood = new Float64Array(ACTIONS.length);
  let offered = 0;
  let scale = 0;
  ACTIONS.forEach((a, i) => {
    const cost = sp.actions[a];
    if (!cost) return;
    offered |= 1 << i;
    ifBad[i] = cost.if_bad;
    ifGood[i] = cost.if_good;
    scale = Math.max(scale, cost.if_bad, cost.if_good);
  });
  return { model: sp.abuse_model, ifBad, ifGood, offered, scale: scale || 1 };
}

/** Abuse likelihood on a surface (the policy's linear model, clamped). */
export function abuseLikelihood(model: SurfacePolicy['abuse_model'], s: SubScores, bounds: Policy['likelihood_bounds']): number {
  const p =
    model.bias +
    (model.risk * s.risk_score +
      model.abuse * s.abuse_score +
      model.anonymity * s.anonymity_score +
      model.infrastructure * s.infrastructure_score +
      model.routing * s.routing_risk_score +
      model.trust * s.trust_score) /
      100;
  return p < bounds.min ? bounds.min : p > bounds.max ? bounds.max : p;
}

/** Expected loss of ACTIONS[i] at likelihood p. */
export function lossOf(cs: CompiledSurface, p: number, i: number): number {
  return p * cs.ifBad[i] + (1 - p) * cs.ifGood[i];
}

export interface Choice {
  action: Action;
  loss: number;
  /** The next best permitted action; null when the guardrails left only one. */
  runnerUp: { action: Action; loss: number } | null;
  /** runnerUp.loss − loss (Infinity when there is no runner-up). */
  margin: number;
  /** margin / runnerUp.loss in 0..1: how much worse the alternative is (1 when there is none). */
  relativeMargin: number;
}

/** The action with least expected loss among the permitted ones (ties go to the milder action). */
export function chooseAction(cs: CompiledSurface, p: number, permitted: ActionMask): Choice {
  let best = -1;
  let bestLoss = Infinity;
  let second = -1;
  let secondLoss = Infinity;
  for (let i = 0; i < ACTIONS.length; i++) {
    if (!(permitted & (1 << i))) continue;
    const loss = lossOf(cs, p, i);
    if (loss < bestLoss) {
      second = best;
      secondLoss = bestLoss;
      best = i;
      bestLoss = loss;
    } else if (loss < secondLoss) {
      second = i;
      secondLoss = loss;
    }
  }
  if (best < 0) throw new Error('no permitted action on this surface');
  return {
    action: ACTIONS[best],
    loss: bestLoss,
    runnerUp: second < 0 ? null : { action: ACTIONS[second], loss: secondLoss },
    margin: second < 0 ? Infinity : secondLoss - bestLoss,
    relativeMargin: second < 0 ? 1 : secondLoss > 0 ? (secondLoss - bestLoss) / secondLoss : 0,
  };
}

const RANK: Readonly<Record<Level, number>> = { low: 0, medium: 1, high: 2 };

/** The lower of confidence levels. */
export function minLevel(a: Level, b: Level): Level {
  return RANK[a] <= RANK[b] ? a : b;
}

/** Confidence the margin alone gives: how much worse the runner-up is, relative to its loss. */
export function marginLevel(choice: Choice, c: Policy['confidence']): Level {
  const m = choice.relativeMargin;
  return m >= c.margin_high ? 'high' : m >= c.margin_medium ? 'medium' : 'low';
}

/** Confidence the evidence quality score allows. */
export function qualityLevel(quality: number, c: Policy['confidence']): Level {
  return quality >= c.quality_high ? 'high' : quality >= c.quality_medium ? 'medium' : 'low';
}

/** Level of a value against medium/high thresholds. */
export function levelOf(v: number, t: { medium: number; high: number }): Level {
  return v >= t.high ? 'high' : v >= t.medium ? 'medium' : 'low';
}
