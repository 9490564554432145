/**
 * Expected-loss choice of an action on one surface: estimate the abuse
 * likelihood p from the sub-scores, then pick the permitted action with the
 * least p × cost_if_bad + (1 − p) × cost_if_good.
 */
import type { Policy, SurfacePolicy } from '../policy/schema.ts';
import { ACTIONS, type Action, type Level, type SubScores } from '../types.ts';

/** Abuse likelihood on a surface (the policy's linear model, clamped). */
export function abuseLikelihood(sp: SurfacePolicy, s: SubScores, bounds: Policy['likelihood_bounds']): number {
  const m = sp.abuse_model;
  const p =
    m.bias +
    (m.risk * s.risk_score +
      m.abuse * s.abuse_score +
      m.anonymity * s.anonymity_score +
      m.infrastructure * s.infrastructure_score +
      m.routing * s.routing_risk_score +
      m.trust * s.trust_score) /
      100;
  return p < bounds.min ? bounds.min : p > bounds.max ? bounds.max : p;
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
  /** The surface's largest cost: the unit of the allowed-actions tolerance. */
  scale: number;
  /** Expected loss of every permitted action, in ACTIONS order. */
  losses: Array<{ action: Action; loss: number }>;
}

/** The action with least expected loss among `permitted` (ties go to the milder action). */
export function chooseAction(sp: SurfacePolicy, p: number, permitted: readonly Action[]): Choice {
  const losses: Array<{ action: Action; loss: number }> = [];
  let scale = 0;
  for (const action of ACTIONS) {
    const cost = sp.actions[action];
    if (!cost) continue;
    if (cost.if_bad > scale) scale = cost.if_bad;
    if (cost.if_good > scale) scale = cost.if_good;
    if (permitted.includes(action)) losses.push({ action, loss: p * cost.if_bad + (1 - p) * cost.if_good });
  }
  if (losses.length === 0) throw new Error('no permitted action on this surface');
  let best = losses[0];
  let second: { action: Action; loss: number } | null = null;
  for (let i = 1; i < losses.length; i++) {
    const l = losses[i];
    if (l.loss < best.loss) {
      second = best;
      best = l;
    } else if (second === null || l.loss < second.loss) {
      second = l;
    }
  }
  return {
    action: best.action,
    loss: best.loss,
    runnerUp: second,
    margin: second ? second.loss - best.loss : Infinity,
    relativeMargin: second ? (second.loss > 0 ? (second.loss - best.loss) / second.loss : 0) : 1,
    scale: scale || 1,
    losses,
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
