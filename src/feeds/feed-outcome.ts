/**
 * What one feed's update came to, and whether it left a good copy: the part
 * of update.ts the feeds' state and status views read, kept apart so a
 * serving worker loads it without the downloader, the validator and the
 * builder's parsers behind update.ts.
 */
import type { CatalogFeed } from './catalog.ts';
import type { Validators } from './download.ts';
import type { CopySummary } from './copy-summary.ts';

/** What happened to one feed. */
export type FeedStatus =
  /** A new, valid copy replaced the old one (or is the first copy). */
  | 'updated'
  /** The download equals the copy on disk. */
  | 'unchanged'
  /** The download failed or was refused; the previous good copy stays. */
  | 'kept-previous'
  /** The download failed or was refused and there is no good copy. */
  | 'missing';

export interface FeedOutcome {
  feed: CatalogFeed;
  status: FeedStatus;
  /** Rows of the copy now on disk (null when none is good). */
  rows: number | null;
  previousRows: number | null;
  bytes: number | null;
  /** Why the download was not used. */
  reason?: string;
  /** The publisher's validators of the copy now on disk (absent: unknown, or the copy was kept). */
  validators?: Validators;
  /** Whether the publisher answered 304 to a conditional request. */
  notModified?: boolean;
  /** The copy on disk, summarised (absent: unknown, e.g. a 304 or a copy from before summaries were kept). */
  summary?: CopySummary;
  /** The download arrived but its content was refused (a parse failure or a bound), not a network or HTTP failure. */
  refused?: boolean;
}

/** Whether a feed has a good copy on disk after the update. */
export function hasGoodCopy(o: FeedOutcome): boolean {
  return o.status === 'updated' || o.status === 'unchanged' || o.status === 'kept-previous';
}
