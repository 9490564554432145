/**
 * Validating a feed copy with the index builder's own parser for its type,
 * streamed within the feed's read bounds, into a CopySummary (rows and
 * coverage per family) that bounds.ts judges against the previous copy's.
 */
import { measureFeedCopy, FeedError, FeedLimitError, type ReadLimits } from '../../index-builder/index.ts';
import { manifestEntryOf, type CatalogFeed } from './catalog.ts';
import { readLimitsOf } from './bounds.ts';
import type { CopySummary } from './copy-summary.ts';

/**
 * Parses `path` as the feed's type within `limits` (null: unbounded, a
 * trusted copy); throws FeedError (naming `displayPath` and the line) when it
 * does not parse, FeedLimitError when it passes a bound.
 */
export async function summarizeCopy(feed: CatalogFeed, path: string, displayPath: string, sha256: string, limits: ReadLimits | null = readLimitsOf(feed)): Promise<CopySummary> {
  const coverage = await measureFeedCopy(path, displayPath, manifestEntryOf(feed), limits);
  return { sha256, ...coverage };
}

/** The refusal reason of a copy that failed to parse: the bound it passed, or the type and line only (a parser's message may quote the copy). */
export function parseFailureReason(feed: CatalogFeed, e: FeedError): string {
  if (e instanceof FeedLimitError) return e.reason + (e.line === undefined ? '' : ` (line ${e.line})`);
  return `does not parse as ${feed.type}${e.line === undefined || e.line === 0 ? '' : ` (line ${e.line})`}`;
}
