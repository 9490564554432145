/**
 * A v1 body memo for the snapshot a V1Context describes (its policy and
 * coverage; `reader`: the index whose hits it keeps), and the answer facts
 * of a context, for tests that drive V1BodyCache without a server.
 */
import { V1BodyCache, type AnswerFacts } from '../../src/lookup/v1-body.ts';
import type { V1Context } from '../../src/lookup/v1.ts';
import { FULL_COVERAGE } from '../../src/scoring/index.ts';

/** A memo whose snapshot has `ctx`'s policy and coverage (every kind held when it names none). */
export function memoOf(reader: object | null, ctx: V1Context, tailSlots?: number, scoredViews?: number): V1BodyCache {
  return new V1BodyCache({ reader, policy: ctx.policy, coverage: ctx.scoring.coverage ?? FULL_COVERAGE }, tailSlots, scoredViews);
}

/** What an answer under `ctx` adds to its snapshot. */
export function answerOf(ctx: V1Context): AnswerFacts {
  return { verifiedCrawler: ctx.scoring.verifiedCrawler, rdapOwner: ctx.rdapOwner ?? null, now: ctx.now };
}
