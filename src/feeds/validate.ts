/**
 * Validating a feed copy with the index builder's own parser for its type:
 * a copy is good when it parses, has at least the catalog's minimum rows and
 * did not shrink too much against the previous copy.
 */
import { FeedError, SourceContext } from '../../index-builder/feed/source.ts';
import { PARSERS } from '../../index-builder/parsers/index.ts';
import type { BuildSink } from '../../index-builder/sink.ts';
import { manifestEntryOf, type CatalogFeed } from './catalog.ts';

export interface RowCount {
  rows: number;
  skipped: number;
}

/** A sink that accepts everything and keeps nothing: the parser's own row counter is what counts. */
const discardingSink: BuildSink = new Proxy({} as BuildSink, { get: () => () => {} });

/** Parses `path` as the feed's type; throws FeedError (naming `displayPath` and the line) when it does not parse. */
export async function countRows(feed: CatalogFeed, path: string, displayPath: string): Promise<RowCount> {
  const ctx = new SourceContext(path, displayPath, manifestEntryOf(feed));
  const mod = await PARSERS[feed.type]();
  await mod.parse(ctx, discardingSink);
  return { rows: ctx.rows, skipped: ctx.skipped };
}

/** Why a new copy is refused, or null when it is good. */
export function refusal(feed: CatalogFeed, next: RowCount, previous: RowCount | null): string | null {
  if (next.rows < feed.minRows) return `${next.rows} rows, fewer than the minimum ${feed.minRows}`;
  // More malformed lines than data: an error page or a different format that happens to half-parse.
  if (next.skipped > next.rows) return `${next.skipped} malformed lines against ${next.rows} rows`;
  if (previous && previous.rows > 0) {
    const lost = (previous.rows - next.rows) / previous.rows;
    if (lost > feed.maxShrink) {
      return `shrank from ${previous.rows} to ${next.rows} rows (${Math.round(lost * 100)}% lost, at most ${Math.round(feed.maxShrink * 100)}% allowed)`;
    }
  }
  return null;
}

/** Counts a copy's rows, or null when the copy does not parse (a previous copy that went bad is not a baseline). */
export async function countRowsOrNull(feed: CatalogFeed, path: string, displayPath: string): Promise<RowCount | null> {
  try {
    return await countRows(feed, path, displayPath);
  } catch (e) {
    if (e instanceof FeedError) return null;
    throw e;
  }
}
