/**
 * What a validated feed copy holds, in a few numbers: its sha256, rows,
 * malformed lines and the address space it lists per family (the builder
 * counts them: index-builder/feed-coverage.ts). Kept in the feed state so the
 * next copy is compared with these numbers, never with a re-parse of the
 * previous file.
 */
import type { FeedCoverage } from '../../index-builder/index.ts';

export { noCoverage, type FamilyCoverage } from '../../index-builder/index.ts';

/** A copy's coverage and the hash of the file it was read from. */
export interface CopySummary extends FeedCoverage {
  sha256: string;
}
