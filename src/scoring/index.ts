/** Public surface of the scoring layer (see docs/scoring.md). */
export { classify, networkContext, isNonRoutable } from './classify.ts';
export { collectEvidence, SIGNAL_RULES } from './evidence.ts';
export { computeScore, traceScore, scoreFromRisk, SCORE_BANDS } from './score.ts';
export { decide } from './decision/decide.ts';
export { assess, assessRecord } from './assess.ts';
export { scoringKey, scoringView, OPERATOR_PLACEHOLDER } from './view.ts';
export type { AssessContext, RecordAssessment } from './assess.ts';
export { coverageOf, coverageNote, FULL_COVERAGE, EVIDENCE_KINDS, STALE_AFTER_MS, holds, isStale, missingRouteIsEvidence, sameCoverage } from './coverage.ts';
export type { Coverage, EvidenceKind, KindCoverage } from './coverage.ts';
export { SIGNALS, SIGNAL_LABELS, isSignalLabel, BASE_RISK, CATEGORY_CAPS } from './signals.ts';
export { loadPolicy, validatePolicy, DEFAULT_POLICY, PolicyError } from './policy/load.ts';
export type { Policy } from './policy/schema.ts';
export type * from './types.ts';
export { SURFACES, ACTIONS, PROFILES } from './types.ts';
