/**
 * The one entry point of scoring: `assess(record, context)` gives what
 * scoring says about a record, each part computed on first read, always in
 * the order classify → evidence → score → decide. The v1 object reads only
 * the parts its fields name; the assessment and the legacy routes read the
 * classification, network and score; `assessRecord` reads all of them.
 */
import type { IndexRecord } from '../index/record.ts';
import { classify, networkContext } from './classify.ts';
import { decide } from './decision/decide.ts';
import { collectEvidence } from './evidence.ts';
import type { Policy } from './policy/schema.ts';
import { traceScore } from './score.ts';
import type { Assessment, Classification, DecisionObjects, Evidence, NetworkContext, Score, ScoreTrace, ScoringContext } from './types.ts';

/** What scoring reads besides the record: the caller-independent facts, and the policy for decisions. */
export interface AssessContext {
  scoring: ScoringContext;
  policy: Policy;
}

/** What scoring says about one record; each part is computed when first read, then kept. */
export interface RecordAssessment {
  readonly classification: Classification;
  /** Category, operator and service of the network (spec 2.1 `network`, the parts scoring owns). */
  readonly network: NetworkContext;
  readonly evidence: Evidence;
  readonly score: Score;
  /** decision, scores, scenarios and explanation (spec 2.1). */
  readonly decisions: DecisionObjects;
}

class LazyAssessment implements RecordAssessment {
  private c: Classification | undefined;
  private ev: Evidence | undefined;
  private trace: ScoreTrace | undefined;
  private d: DecisionObjects | undefined;
  constructor(
    private readonly record: IndexRecord,
    private readonly context: AssessContext,
  ) {}

  get classification(): Classification {
    return (this.c ??= classify(this.record, this.context.scoring));
  }

  get network(): NetworkContext {
    return networkContext(this.record, this.classification);
  }

  get evidence(): Evidence {
    return (this.ev ??= collectEvidence(this.record, this.classification, this.context.scoring.coverage));
  }

  get score(): Score {
    return this.scoreTrace().score;
  }

  get decisions(): DecisionObjects {
    const { record, context } = this;
    // The trace is passed so decide does not re-derive it.
    return (this.d ??= decide(record, this.classification, this.evidence, this.score, context.policy, this.scoreTrace(), context.scoring.coverage));
  }

  private scoreTrace(): ScoreTrace {
    return (this.trace ??= traceScore(this.evidence, this.context.scoring.coverage, this.record.override));
  }
}

/** What scoring says about a record in a context, computed lazily part by part. */
export function assess(record: IndexRecord, context: AssessContext): RecordAssessment {
  return new LazyAssessment(record, context);
}

/** Every part of assess() at once, as one plain object (tests, benches, tools). */
export function assessRecord(record: IndexRecord, scoring: ScoringContext, policy: Policy): Assessment {
  const a = assess(record, { scoring, policy });
  return { classification: a.classification, network: a.network, evidence: a.evidence, score: a.score, ...a.decisions };
}
