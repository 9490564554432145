/**
 * One refresh round, as the refresh child runs it (never the serving
 * process): fetch the catalog's due feeds (src/feeds/update.ts), record each
 * outcome in the state file, write the feeds manifest, and build the index
 * when a feed changed. Progress goes to the parent as events; the state
 * file is written atomically here, so a child killed mid-round leaves the
 * last consistent state.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { coverageOf } from '../index/coverage.ts';
import { EVIDENCE_KINDS } from '../index/evidence-kinds.ts';
import { mapIndexFile } from '../index/map-index-file.ts';
import { localPathOf, type CatalogFeed } from './catalog.ts';
import type { DownloadLimits } from './download.ts';
import { operatorEntries, writeFeedsManifest } from './manifest-writer.ts';
import { updateFeeds, type FeedOutcome, type FeedStatus } from './update.ts';
import { countersOf, loadRefreshState, newFeedRecord, recordOutcome, saveRefreshState, type FeedRecord, type RefreshState } from './feed-state.ts';

/** What a round works on: the refresher's settings, as it passes them to the child. */
export interface RoundSettings {
  indexPath: string;
  /** Where the feed copies live: the feeds folder, or the operator manifest's folder. */
  feedsDir: string;
  catalog: CatalogFeed[];
  /** Cadence of feeds whose catalog entry names none. */
  refreshMs: number;
  /** The operator's manifest (mode `manifest`), else null. */
  manifest: string | null;
  /** Build with the embedded default data (false: the feeds only; tests). */
  withDefaults: boolean;
  /** Fetch `<mirror>/<path>` instead of each publisher's URL. */
  mirror: string | null;
  limits: DownloadLimits;
  /** First retry delay of a failed feed; doubles per consecutive failure up to its cadence. */
  retryBaseMs: number;
}

/** What the parent asks the child to do. */
export interface RefreshRequest extends RoundSettings {
  statePath: string;
  /** The parent's clock minus the real one (the refresher may run on a test's clock). */
  clockOffsetMs: number;
}

/** One feed's outcome as the child reports it. */
export interface FeedOutcomeLine {
  path: string;
  status: FeedStatus;
  notModified?: boolean;
  rows: number | null;
  reason?: string;
}

/** The child's events, one JSON line each on its stdout. */
export type RefreshEvent =
  | { kind: 'fetched'; outcomes: FeedOutcomeLine[] }
  | { kind: 'building' }
  | { kind: 'built'; ok: boolean; detail: string; seconds: number; coverage: string | null }
  | { kind: 'done'; peakRssBytes: number | null };

/** Reasons a download failed for want of a network (not a publisher's answer). */
export const UNREACHABLE = /^(download failed|timed out)/;
/** Consecutive network-level failures, with nothing fetched, after which a round stops trying the rest (offline). */
const OFFLINE_AFTER = 3;

/** Runs one round: fetch the due feeds, then build when something changed. */
export async function runRefreshRound(req: RefreshRequest, emit: (e: RefreshEvent) => void): Promise<void> {
  const now = () => Date.now() + req.clockOffsetMs;
  const state = loadRefreshState(req.statePath);
  await fetchDue(req, state, now, emit);
  if (!state.buildPending) return;
  emit({ kind: 'building' });
  const t0 = performance.now();
  let detail = '';
  try {
    await buildFromFeeds(req);
  } catch (e) {
    detail = (e as Error).message;
  }
  const seconds = Math.round((performance.now() - t0) / 100) / 10;
  const ok = detail === '';
  state.lastBuild = { at: now(), ok, seconds, peakRssBytes: null };
  countersOf(state).builds[ok ? 'ok' : 'failed']++;
  state.buildError = ok ? null : detail;
  saveRefreshState(req.statePath, state);
  emit({ kind: 'built', ok, detail, seconds, coverage: ok ? coverageLine(req.indexPath, now()) : null });
}

/** The record of a feed (a new one when the state does not know it). */
function recordOf(req: RefreshRequest, state: RefreshState, feed: CatalogFeed): FeedRecord {
  return (state.feeds[feed.path] ??= newFeedRecord(existsSync(localPathOf(req.feedsDir, feed))));
}

/** Fetches every due feed, records the outcomes and writes the feeds manifest. */
async function fetchDue(req: RefreshRequest, state: RefreshState, now: () => number, emit: (e: RefreshEvent) => void): Promise<void> {
  const started = now();
  const due = req.catalog.filter((f) => recordOf(req, state, f).nextAttemptAt <= started);
  if (due.length === 0) return;
  const outcomes: FeedOutcome[] = [];
  let unreachable = 0;
  for (const feed of due) {
    if (unreachable >= OFFLINE_AFTER && outcomes.length === unreachable) {
      // Offline: the first publishers all failed at the network level; do not wait on every other one.
      outcomes.push({ feed, status: recordOf(req, state, feed).hasCopy ? 'kept-previous' : 'missing', rows: null, previousRows: null, bytes: null, reason: `download failed: not attempted, ${OFFLINE_AFTER} publishers unreachable` });
      continue;
    }
    const [o] = await updateFeeds({
      feedsDir: req.feedsDir,
      catalog: [feed],
      mirror: req.mirror,
      limits: req.limits,
      log: () => {},
      validatorsOf: (f) => recordOf(req, state, f).validators,
      previousOf: (f) => recordOf(req, state, f).copy ?? null,
    });
    if (UNREACHABLE.test(o.reason ?? '')) unreachable++;
    outcomes.push(o);
  }
  const at = now();
  const fetches = countersOf(state).fetches;
  for (const o of outcomes) {
    record(req, recordOf(req, state, o.feed), o, at);
    if (o.status === 'updated') fetches.updated++;
    else if (o.status === 'unchanged' && o.notModified) fetches.not_modified++;
    else if (o.status === 'unchanged') fetches.unchanged++;
    else if (o.refused) fetches.refused++;
    else fetches.failed++;
  }
  if (outcomes.some((o) => o.status === 'updated')) state.buildPending = true;
  if (req.manifest === null) {
    // The feeds folder's manifest lists every catalog feed with a good copy (and the operator's own entries).
    const present = req.catalog.filter((f) => recordOf(req, state, f).hasCopy);
    const manifestPath = join(req.feedsDir, 'feeds.json');
    // Offline with nothing fetched yet: no manifest to write and nothing to rebuild.
    if (present.length > 0 || existsSync(manifestPath)) {
      const written = writeFeedsManifest(req.feedsDir, present, operatorEntries(manifestPath, req.catalog));
      if (written.changed) state.buildPending = true;
    }
  }
  saveRefreshState(req.statePath, state);
  emit({ kind: 'fetched', outcomes: outcomes.map((o) => ({ path: o.feed.path, status: o.status, notModified: o.notModified, rows: o.rows, reason: o.reason })) });
}

/** Updates a feed's record from its outcome: success schedules the next check at its cadence, failure backs off. */
function record(req: RefreshRequest, r: FeedRecord, o: FeedOutcome, at: number): void {
  const cadence = o.feed.cadenceMs ?? req.refreshMs;
  recordOutcome(r, o, at);
  const ok = o.status === 'updated' || o.status === 'unchanged';
  // A refused copy is not retried sooner than the feed's cadence would: the publisher's next copy is what may differ.
  r.nextAttemptAt = at + (ok || o.refused ? cadence : Math.min(cadence, req.retryBaseMs * 2 ** Math.min(r.failures - 1, 20)));
}

/** Builds the index from the feeds folder (or the operator's manifest); the builder writes it atomically. */
async function buildFromFeeds(req: RefreshRequest): Promise<void> {
  const { buildIndex, loadManifest, withDataDefaults } = await import('../../index-builder/index.ts');
  const { findDataSources, findDefaultSources } = await import('./default-data.ts');
  // The index served now (and published, when this server publishes): the new one keeps its ids, so the
  // publisher's deltas and the history of served indexes hold only what changed.
  const previous = existsSync(req.indexPath) ? req.indexPath : undefined;
  if (req.manifest) {
    // The operator's manifest: its own file stays theirs, so the result is not marked as the server's.
    const manifest = loadManifest(req.manifest);
    await buildIndex({ sources: req.withDefaults ? withDataDefaults(manifest, () => findDataSources()) : manifest, out: req.indexPath, quiet: true, previous });
    return;
  }
  const manifestPath = join(req.feedsDir, 'feeds.json');
  const sources = req.withDefaults ? findDefaultSources(req.feedsDir) : existsSync(manifestPath) ? loadManifest(manifestPath) : [];
  if (sources.length === 0) throw new Error(`${manifestPath}: no feed has a good copy; nothing to build`);
  await buildIndex({ sources, out: req.indexPath, quiet: true, managedBy: 'server', previous });
}

/** The new index's coverage per evidence kind, for the swap's log line. */
function coverageLine(indexPath: string, now: number): string | null {
  try {
    const coverage = coverageOf(mapIndexFile(indexPath, { verifyChecksums: false }).meta, now);
    return EVIDENCE_KINDS.map((k) => `${k}=${coverage.kinds[k].state}`).join(' ');
  } catch {
    return null;
  }
}
