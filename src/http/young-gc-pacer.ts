/**
 * Paces young-generation (eden) collections by requests answered.
 *
 * JavaScriptCore sizes its nursery in proportion to the heap it sees, and the
 * memory-mapped index counts as heap: a busy server then allocates a large
 * pile of response strings between two young collections, and each of those
 * collections pauses long. Collecting every few thousand requests instead
 * keeps each pause short for the same total work, which is what a p99
 * latency sees (BENCHMARKS.md, "Measured changes in the code").
 */
import { edenGC } from 'bun:jsc';

/** Requests between two young collections (a few MB of response bodies). */
export const REQUESTS_PER_YOUNG_GC = 2000;

/** Counts requests and runs `collect` once every `every` of them. */
export class YoungGcPacer {
  private count = 0;

  constructor(
    private readonly every: number = REQUESTS_PER_YOUNG_GC,
    private readonly collect: () => unknown = edenGC,
  ) {
    if (!Number.isInteger(every) || every < 1) throw new RangeError(`every must be a positive integer, got ${every}`);
  }

  /** Notes one request; collects when it completes a period. */
  tick(): void {
    if (++this.count < this.every) return;
    this.count = 0;
    this.collect();
  }
}
