/**
 * Updating the local copies of the catalog's feeds: download each one to a
 * temp file beside its copy, validate it with the real parser, and rename it
 * over the copy only when it is good. A failed feed keeps its previous copy;
 * one feed's failure never stops the others.
 */
import { existsSync, mkdirSync, renameSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fsyncDir } from './fsync-dir.ts';
import { localPathOf, sourceUrlOf, type CatalogFeed } from './catalog.ts';
import { DownloadError, downloadToFile, sha256OfFile, type DownloadLimits, type Validators } from './download.ts';
import { countRows, countRowsOrNull, refusal, type RowCount } from './validate.ts';
import { FeedError } from '../../index-builder/feed/source.ts';

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
}

export interface UpdateOptions {
  feedsDir: string;
  catalog: CatalogFeed[];
  /** Fetch `<mirror>/<path>` instead of each publisher URL. */
  mirror: string | null;
  limits: DownloadLimits;
  /** Progress lines (one or two per feed). */
  log: (line: string) => void;
  /** The validators remembered for a feed's copy: the request is then conditional. */
  validatorsOf?: (feed: CatalogFeed) => Validators | null;
}

/** Whether a feed has a good copy on disk after the update. */
export function hasGoodCopy(o: FeedOutcome): boolean {
  return o.status === 'updated' || o.status === 'unchanged' || o.status === 'kept-previous';
}

/** Updates every feed of the catalog in turn; resolves with one outcome per feed. */
export async function updateFeeds(opts: UpdateOptions): Promise<FeedOutcome[]> {
  const outcomes: FeedOutcome[] = [];
  for (let i = 0; i < opts.catalog.length; i++) {
    const feed = opts.catalog[i];
    const url = sourceUrlOf(feed, opts.mirror);
    opts.log(`[${i + 1}/${opts.catalog.length}] ${feed.path} <- ${url}`);
    const outcome = await updateOne(feed, url, opts);
    opts.log(`    ${describe(outcome)}`);
    outcomes.push(outcome);
  }
  return outcomes;
}

/** One line for the progress log. */
function describe(o: FeedOutcome): string {
  const rows = o.rows === null ? '' : ` ${o.rows} rows`;
  const was = o.previousRows === null || o.status === 'unchanged' ? '' : ` (was ${o.previousRows})`;
  return `${o.status}${rows}${was}${o.reason ? `: ${o.reason}` : ''}`;
}

/** Downloads, validates and publishes one feed. */
async function updateOne(feed: CatalogFeed, url: string, opts: UpdateOptions): Promise<FeedOutcome> {
  const target = localPathOf(opts.feedsDir, feed);
  mkdirSync(dirname(target), { recursive: true });
  // Same folder (atomic rename) and same extension (the parser gunzips by name).
  const temp = join(dirname(target), `.download-${process.pid}-${basename(target)}`);
  const hasCopy = existsSync(target);
  let previousCount: Promise<RowCount | null> | null = null;
  // Counted only when needed: a 304 must not cost a parse of the copy.
  const countPrevious = (): Promise<RowCount | null> =>
    (previousCount ??= hasCopy ? countRowsOrNull(feed, target, feed.path) : Promise.resolve(null));
  const failed = async (reason: string): Promise<FeedOutcome> => {
    const previous = await countPrevious();
    return {
      feed,
      status: previous ? 'kept-previous' : 'missing',
      rows: previous?.rows ?? null,
      previousRows: previous?.rows ?? null,
      bytes: null,
      reason,
    };
  };

  const validators = hasCopy ? (opts.validatorsOf?.(feed) ?? undefined) : undefined;
  let downloaded;
  try {
    downloaded = await downloadToFile(url, temp, opts.limits, validators);
  } catch (e) {
    if (e instanceof DownloadError) return failed(e.message);
    throw e;
  }
  if (downloaded.notModified) return { feed, status: 'unchanged', rows: null, previousRows: null, bytes: 0, validators, notModified: true };
  const fresh: Validators = { etag: downloaded.etag, lastModified: downloaded.lastModified };
  try {
    let next: RowCount;
    try {
      next = await countRows(feed, temp, `${feed.path} (download)`);
    } catch (e) {
      if (e instanceof FeedError) return failed(`refused: ${e.message}`);
      throw e;
    }
    const previous = await countPrevious();
    const refused = refusal(feed, next, previous);
    if (refused) return failed(`refused: ${refused}`);
    const base = { feed, rows: next.rows, previousRows: previous?.rows ?? null, bytes: downloaded.bytes, validators: fresh };
    if (previous && (await sha256OfFile(target)) === downloaded.sha256) return { ...base, status: 'unchanged' };
    renameSync(temp, target);
    fsyncDir(dirname(target));
    return { ...base, status: 'updated' };
  } finally {
    if (existsSync(temp)) unlinkSync(temp);
  }
}
