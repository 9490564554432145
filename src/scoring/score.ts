/**
 * The risk score (spec 2.1 `score`): base risk plus signal weights, bounded
 * per signal category and to 0..100. Depends on the evidence and the index's
 * coverage only (a stale kind's signals weigh less), so the same record on
 * the same index always scores the same and no policy can move it.
 */
import { FULL_COVERAGE, isStale, type Coverage } from './coverage.ts';
import { BASE_RISK, CATEGORY_CAPS, SIGNALS, STALE_WEIGHT_FACTOR, isSignalLabel, type SignalDefinition } from './signals.ts';
import type { Band, Contribution, Evidence, RecommendedAction, Score, ScoreTrace, SignalCategory, Verdict } from './types.ts';

/** Risk thresholds: a risk below `below` gets that row's band, verdict and action. */
export const SCORE_BANDS: ReadonlyArray<{ below: number; band: Band; verdict: Verdict; action: RecommendedAction }> = [
  { below: 20, band: 'good', verdict: 'allow', action: 'allow' },
  { below: 45, band: 'fair', verdict: 'monitor', action: 'rate_limit' },
  { below: 70, band: 'poor', verdict: 'challenge', action: 'challenge' },
  { below: 101, band: 'bad', verdict: 'block', action: 'block' },
];

const clamp = (v: number, lo: number, hi: number) => (v < lo ? lo : v > hi ? hi : v);

/** A signal's weight under the coverage: a stale kind's signals count for less. */
export function signalWeight(def: SignalDefinition, coverage: Coverage): number {
  return def.kind !== null && isStale(coverage, def.kind) ? Math.trunc(def.weight * STALE_WEIGHT_FACTOR) : def.weight;
}

/** The score with the per-signal contributions that produced it. */
export function traceScore(evidence: Evidence, coverage: Coverage = FULL_COVERAGE): ScoreTrace {
  const categoryRaw: Partial<Record<SignalCategory, number>> = {};
  const contributions: Contribution[] = [];
  let raw = BASE_RISK;
  for (const signal of evidence.signals) {
    if (!isSignalLabel(signal.label)) throw new Error(`unregistered signal label: ${signal.label}`);
    const def = SIGNALS[signal.label];
    const weight = coverage.stale === 0 ? def.weight : signalWeight(def, coverage);
    const cap = CATEGORY_CAPS[def.category];
    const before = categoryRaw[def.category] ?? 0;
    const after = before + weight;
    categoryRaw[def.category] = after;
    const categoryDelta = clamp(after, cap.min, cap.max) - clamp(before, cap.min, cap.max);
    // Each signal is credited with the change it caused to the clamped total, so the
    // effective contributions add up exactly to risk_score - base_risk_score.
    const prevRaw = raw;
    raw += categoryDelta;
    const effective = clamp(raw, 0, 100) - clamp(prevRaw, 0, 100);
    contributions.push({ label: def.label, weight, effective });
  }
  const risk = clamp(raw, 0, 100);
  return { score: scoreFromRisk(risk), base_risk_score: BASE_RISK, contributions };
}

/** Spec 2.1 score object for a risk value in 0..100. */
export function scoreFromRisk(risk: number): Score {
  const row = SCORE_BANDS.find((b) => risk < b.below) ?? SCORE_BANDS[SCORE_BANDS.length - 1];
  return { ip_score: 100 - risk, risk_score: risk, band: row.band, verdict: row.verdict, recommended_action: row.action };
}

/** Spec 2.1 score object of the evidence. */
export function computeScore(evidence: Evidence, coverage: Coverage = FULL_COVERAGE): Score {
  return traceScore(evidence, coverage).score;
}
