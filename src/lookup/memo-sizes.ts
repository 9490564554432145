/**
 * The sizes of a serving snapshot's memos, on their own: the memory budget
 * (src/memory-budget.ts) reads them in every thread, which should not load
 * the answer code to do it.
 */

/**
 * Slots of the per-record memo (each holds one record's own JSON; the scored
 * text is shared). Chosen where more slots stop paying for their memory on
 * random traffic (BENCHMARKS.md, "Measured changes in the code").
 */
export const TAIL_SLOTS = 1 << 17;

/** Above this many views per policy the scored memo starts over (real indexes have a few hundred). */
export const MAX_VIEWS = 50_000;

/** As many slots of the legacy one-line memo as the v1 body memo's (lines are short strings). */
export const LINE_SLOTS = 1 << 17;

/** Sizes of a snapshot's memos (src/memory-budget.ts). */
export interface MemoSizes {
  /** Slots of the v1 body memo (a power of two). */
  v1TailSlots: number;
  /** Scoring views held before the scored memo starts over. */
  scoredViews: number;
  /** Slots of the legacy one-line memo (a power of two). */
  legacyLineSlots: number;
}

/** Each memo's own default size. */
export const DEFAULT_MEMO_SIZES: Readonly<MemoSizes> = { v1TailSlots: TAIL_SLOTS, scoredViews: MAX_VIEWS, legacyLineSlots: LINE_SLOTS };
