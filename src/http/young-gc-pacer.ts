/**
 * Paces young-generation (eden) collections by requests answered.
 *
 * JavaScriptCore sizes its nursery in proportion to the heap it sees, and the
 * memory-mapped index (hundreds of MB) counts as heap: a busy server then
 * allocates ~400 MB of response strings between two young collections, and
 * each of those collections pauses for 3-6 ms (BENCHMARKS.md, fourth
 * session). Collecting every few thousand requests instead keeps each pause
 * near 1 ms for the same total work, which is what a p99 latency sees.
 */
import { edenGC } from 'bun:jsc';

/** Requests between two young collections (~6 MB of ~3 KB response bodies). */
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
