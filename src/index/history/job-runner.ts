/**
 * What the history thread runs (worker.ts), as plain functions tests can
 * call too: a recording takes the folder's recording lock, records, prunes
 * and removes the hard link it was given; a rebuild writes a version into
 * the folder's cache of rebuilt files, keeping at most CACHED_REBUILDS.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isDeferred } from './deferred-recording.ts';
import { adoptHistoryJob, type AdoptJob, type AdoptOutcome } from './history-adopt.ts';
import { rebuildVersion } from './rebuild.ts';
import { takeRecordingLock } from './recording-lock.ts';
import { HistoryError, pruneHistory, readCatalog, recordVersion, xxh3Of, type RecordResult } from './store.ts';

/** Rebuilt files kept on disk (each the size of an index): the ones asked for last. */
export const CACHED_REBUILDS = 2;

/** A job for the history thread. */
export type HistoryJob =
  /** `unlessDeferred`: nothing is written when a running puller deferred this version (deferred-recording.ts). */
  | { op: 'record'; dir: string; path: string; servedFromMs: number; nowMs: number; retentionMs: number; unlessDeferred?: boolean }
  | { op: 'rebuild'; dir: string; id: string; out: string }
  | AdoptJob;

/** Runs any history job (the history thread's one dispatch). */
export function runHistoryJob(job: HistoryJob): RecordOutcome | string | AdoptOutcome {
  if (job.op === 'record') return recordHistoryJob(job);
  if (job.op === 'rebuild') return rebuildHistoryJob(job);
  return adoptHistoryJob(job);
}

/** What a recording did (null: another process holds the recording lock). */
export type RecordOutcome = (RecordResult & { pruned: number }) | null;

/** Records the file at `job.path` (a link the caller made for this job, removed here), then prunes. */
export function recordHistoryJob(job: Extract<HistoryJob, { op: 'record' }>): RecordOutcome {
  mkdirSync(job.dir, { recursive: true });
  try {
    const release = takeRecordingLock(job.dir);
    if (!release) return null;
    try {
      const result = recordVersion(job.dir, job.path, job.servedFromMs, job.unlessDeferred ? (id) => isDeferred(job.dir, id) : undefined);
      return { ...result, pruned: pruneHistory(job.dir, job.nowMs, job.retentionMs) };
    } finally {
      release();
    }
  } finally {
    rmSync(job.path, { force: true });
  }
}

/**
 * Rebuilds version `job.id` into `job.out` (a copy already there is kept
 * when its XXH3 is the version's), then trims the cache folder. The file
 * is checked whole here, so the serving thread maps it without reading it
 * all again (past-indexes.ts).
 */
export function rebuildHistoryJob(job: Extract<HistoryJob, { op: 'rebuild' }>): string {
  const catalog = readCatalog(job.dir);
  const version = catalog.versions.find((v) => v.id === job.id);
  if (!version) throw new HistoryError(`history ${job.dir}: version ${job.id.slice(0, 16)} is no longer retained`);
  if (existsSync(job.out)) {
    if (statSync(job.out).size === version.sizeBytes && xxh3Of(Bun.mmap(job.out, { shared: false })) === version.xxh3) return job.out;
    rmSync(job.out, { force: true });
  }
  const cache = join(job.out, '..');
  mkdirSync(cache, { recursive: true });
  rebuildVersion(job.dir, catalog, version, job.out);
  trimCache(cache);
  return job.out;
}

/** Keeps the CACHED_REBUILDS newest rebuilt files (a mapped file stays readable after its name is removed). */
function trimCache(cache: string): void {
  const files = readdirSync(cache)
    .filter((n) => n.endsWith('.idx'))
    .map((n) => ({ path: join(cache, n), at: statSync(join(cache, n), { throwIfNoEntry: false })?.mtimeMs ?? 0 }))
    .sort((a, b) => b.at - a.at);
  for (const f of files.slice(CACHED_REBUILDS)) rmSync(f.path, { force: true });
}
