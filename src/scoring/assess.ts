/**
 * One call for everything scoring knows about a record (the HTTP layer may
 * instead call the steps it needs; see docs/scoring.md).
 */
import type { IndexRecord } from '../index/record.ts';
import { classify, networkContext } from './classify.ts';
import { decide } from './decision/decide.ts';
import { collectEvidence } from './evidence.ts';
import type { Policy } from './policy/schema.ts';
import { traceScore } from './score.ts';
import type { Assessment, ScoringContext } from './types.ts';

/** Classification, network context, evidence, score and the decision objects of a record. */
export function assessRecord(record: IndexRecord, ctx: ScoringContext, policy: Policy): Assessment {
  const classification = classify(record, ctx);
  const evidence = collectEvidence(record, classification, ctx.coverage);
  const trace = traceScore(evidence, ctx.coverage);
  const d = decide(record, classification, evidence, trace.score, policy, trace, ctx.coverage);
  return {
    classification,
    network: networkContext(record, classification),
    evidence,
    score: trace.score,
    decision: d.decision,
    scores: d.scores,
    scenarios: d.scenarios,
    explanation: d.explanation,
  };
}
