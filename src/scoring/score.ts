/**
 * The risk score (spec 2.1 `score`): base risk plus signal weights, bounded
 * per signal category and to 0..100. Depends on the evidence and the index's
 * coverage only (a stale kind's signals weigh less), so the same record on
 * the same index always scores the same and no policy can move it.
 */
import type { OverrideFacts } from '../index/record.ts';
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
export function traceScore(evidence: Evidence, coverage: Coverage = FULL_COVERAGE, override?: OverrideFacts): ScoreTrace {
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
  let risk = clamp(raw, 0, 100);
  if (override !== undefined && (override.risk !== 0 || override.verdict !== null)) {
    // The operator's word comes last and is not capped by a category: its risk, then its verdict's band.
    let after = clamp(risk + override.risk, 0, 100);
    if (override.verdict !== null) after = intoBand(after, override.verdict);
    contributions.push({ label: 'operator_override', weight: after - risk, effective: after - risk, reason: overrideReason(override) });
    risk = after;
  }
  return { score: scoreFromRisk(risk), base_risk_score: BASE_RISK, contributions };
}

/** The risk nearest to `risk` whose band has `verdict`. */
function intoBand(risk: number, verdict: Verdict): number {
  const i = SCORE_BANDS.findIndex((b) => b.verdict === verdict);
  const lo = i === 0 ? 0 : SCORE_BANDS[i - 1].below;
  const hi = Math.min(SCORE_BANDS[i].below - 1, 100);
  return clamp(risk, lo, hi);
}

/** How an override's adjustment reads in the explanation. */
function overrideReason(o: OverrideFacts): string {
  const what = [o.risk !== 0 ? `risk ${o.risk > 0 ? '+' : ''}${o.risk}` : '', o.verdict !== null ? `verdict ${o.verdict}` : ''].filter(Boolean).join(', ');
  return `Operator override ${o.cidr} (${what})${o.note ? `: ${o.note}` : ''}`;
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
