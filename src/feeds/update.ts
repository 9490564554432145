/**
 * Updating the local copies of the catalog's feeds: download each one to a
 * temp file beside its copy within the feed's size bound, compare its sha256
 * with the accepted copy's (equal: done, nothing parsed), validate it with
 * the real parser (streamed, bounded) into a summary, check that against the
 * previous copy's summary and the feed's bounds (bounds.ts), and rename it
 * over the copy only when it is good. A failed or refused feed keeps its
 * previous copy; one feed's failure never stops the others.
 */
import { existsSync, mkdirSync, renameSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fsyncPath } from '../file-io/fsync-path.ts';
import { localPathOf, sourceUrlOf, type CatalogFeed } from './catalog.ts';
import { DownloadError, downloadToFile, sha256OfFile, type DownloadLimits, type Validators } from './download.ts';
import { parseFailureReason, summarizeCopy } from './validate.ts';
import { copyRefusal, maxBytesOf } from './bounds.ts';
import type { CopySummary } from './copy-summary.ts';
import type { FeedOutcome } from './feed-outcome.ts';
import { FeedError } from '../../index-builder/index.ts';

export { hasGoodCopy, type FeedOutcome, type FeedStatus } from './feed-outcome.ts';

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
  /** The accepted copy's summary, kept in the feed state (null: unknown; the copy is then parsed once as the baseline). */
  previousOf?: (feed: CatalogFeed) => CopySummary | null;
  /** Feed paths whose new copy is taken however far it moved from the previous one (`feeds update --accept`). */
  accept?: ReadonlySet<string>;
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
  const remembered = hasCopy ? (opts.previousOf?.(feed) ?? null) : null;
  // The copy's sha256, hashed (never parsed) when first needed: a remembered summary counts only for the bytes it describes.
  let hashed: Promise<string | null> | null = null;
  const onDiskSha = (): Promise<string | null> => (hashed ??= hasCopy ? sha256OfFile(target) : Promise.resolve(null));
  let baseline: Promise<CopySummary | null> | null = null;
  // The previous copy is parsed only when no summary of its bytes was kept (a copy from before summaries, or changed by hand), once.
  const previous = (): Promise<CopySummary | null> =>
    (baseline ??= (async () => {
      if (!hasCopy) return null;
      if (remembered && remembered.sha256 === (await onDiskSha())) return remembered;
      return summarizeOrNull(feed, target, (await onDiskSha()) ?? undefined);
    })());
  // The copy on disk stays; it is good when its summary is known, or (a copy from before summaries) when it still parses.
  const failed = async (reason: string, refused = false): Promise<FeedOutcome> => {
    const kept = await previous();
    return { feed, status: kept ? 'kept-previous' : 'missing', rows: kept?.rows ?? null, previousRows: kept?.rows ?? null, bytes: null, reason, refused, summary: kept ?? undefined };
  };

  const validators = hasCopy ? (opts.validatorsOf?.(feed) ?? undefined) : undefined;
  let downloaded;
  try {
    downloaded = await downloadToFile(url, temp, { ...opts.limits, maxBytes: maxBytesOf(feed, opts.limits.maxBytes), allowHosts: feed.allowHosts }, validators);
  } catch (e) {
    if (e instanceof DownloadError) return failed(e.message);
    throw e;
  }
  if (downloaded.notModified) return { feed, status: 'unchanged', rows: null, previousRows: null, bytes: 0, validators, notModified: true };
  const fresh: Validators = { etag: downloaded.etag, lastModified: downloaded.lastModified };
  try {
    // Hash first: the same bytes as the accepted copy need no parse at all.
    if ((await onDiskSha()) === downloaded.sha256) {
      const summary = remembered?.sha256 === downloaded.sha256 ? remembered : undefined;
      return { feed, status: 'unchanged', rows: summary?.rows ?? null, previousRows: summary?.rows ?? null, bytes: downloaded.bytes, validators: fresh, summary };
    }
    let next: CopySummary;
    try {
      next = await summarizeCopy(feed, temp, `${feed.path} (download)`, downloaded.sha256);
    } catch (e) {
      if (e instanceof FeedError) return failed(`refused: ${parseFailureReason(feed, e)}`, true);
      // Any other throw is the parser meeting input it did not expect: this copy is refused, the round goes on (its message is not shown: it may quote the copy).
      return failed(`refused: the ${feed.type} parser failed on this copy (${(e as Error)?.name ?? 'error'})`, true);
    }
    const before = await previous();
    const refused = copyRefusal(feed, next, before, opts.accept?.has(feed.path) ?? false);
    if (refused) return failed(`refused: ${refused}`, true);
    renameSync(temp, target);
    fsyncPath(dirname(target));
    return { feed, status: 'updated', rows: next.rows, previousRows: before?.rows ?? null, bytes: downloaded.bytes, validators: fresh, summary: next };
  } finally {
    if (existsSync(temp)) unlinkSync(temp);
  }
}

/** The summary of a copy already on disk (hashed and parsed within its bounds), or null when it no longer parses (not a baseline). */
async function summarizeOrNull(feed: CatalogFeed, path: string, sha256?: string): Promise<CopySummary | null> {
  try {
    return await summarizeCopy(feed, path, feed.path, sha256 ?? (await sha256OfFile(path)));
  } catch (e) {
    if (e instanceof FeedError) return null;
    throw e;
  }
}
