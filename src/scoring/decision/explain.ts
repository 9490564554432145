/**
 * The explanation object (spec 2.2): drivers from the score trace, and a
 * reason chain a reader can follow from base risk to the advised action.
 */
import { SIGNALS, isSignalLabel } from '../signals.ts';
import type { Driver, Explanation, Score, ScoreTrace } from '../types.ts';

/** "+18", "-5", "+0". */
export function signed(n: number): string {
  return n < 0 ? String(n) : `+${n}`;
}

/**
 * Drivers: every scored signal with the change it actually made. Their
 * impact_score values add up exactly to risk_score − base_risk_score.
 */
export function driversOf(trace: ScoreTrace): Driver[] {
  const drivers: Driver[] = [];
  for (const c of trace.contributions) {
    if (c.weight === 0) continue;
    const description = c.reason ?? (isSignalLabel(c.label) ? SIGNALS[c.label].description : c.label);
    const nominal = c.reason !== undefined || !isSignalLabel(c.label) ? c.weight : SIGNALS[c.label].weight;
    const capped = c.effective !== c.weight;
    // A stale source's signal counts for less (docs/scoring.md): say so where the weight is shown.
    const stale = c.weight !== nominal ? `; stale data: weight ${signed(c.weight)} instead of ${signed(nominal)}` : '';
    drivers.push({
      type: 'signal',
      label: c.label,
      impact: signed(c.effective),
      impact_score: c.effective,
      direction: c.effective > 0 ? 'raises_risk' : c.effective < 0 ? 'lowers_risk' : 'neutral',
      reason: capped
        ? `${description} (weight ${signed(c.weight)}, limited by caps to ${signed(c.effective)}${stale})`
        : stale
          ? `${description} (${stale.slice(2)})`
          : description,
    });
  }
  // Strongest first; the sort is stable so equal impacts keep registry order.
  drivers.sort((a, b) => Math.abs(b.impact_score) - Math.abs(a.impact_score));
  return drivers;
}

/** The score part of the reason chain: base, each signal's step, and the result. */
export function scoreChain(trace: ScoreTrace, score: Score): string[] {
  const chain = [`base risk ${trace.base_risk_score}`];
  let running = trace.base_risk_score;
  for (const c of trace.contributions) {
    if (c.weight === 0) continue;
    running += c.effective;
    chain.push(`${c.label} ${signed(c.effective)} -> risk ${running}`);
  }
  chain.push(`risk ${score.risk_score}: band ${score.band}, verdict ${score.verdict}, recommended ${score.recommended_action}`);
  return chain;
}

export interface ExplanationParts {
  trace: ScoreTrace;
  score: Score;
  summary: string;
  fallbackReason: string;
  guardrails: string[];
  decisionChain: string[];
}

/** Assembles the explanation object. */
export function buildExplanation(parts: ExplanationParts): Explanation {
  const drivers = driversOf(parts.trace);
  const top = drivers.find((d) => d.impact_score !== 0);
  return {
    summary: parts.summary,
    key_reason: top ? top.reason : parts.fallbackReason,
    drivers,
    guardrails_applied: parts.guardrails,
    reason_chain: scoreChain(parts.trace, parts.score).concat(parts.decisionChain),
  };
}
