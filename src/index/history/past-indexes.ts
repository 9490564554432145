/**
 * One thread's view of the retained history (store.ts): the catalog, read
 * again only when its file changed; the versions' rebuilt files, mapped, the
 * last MAPPED_PAST used kept open; and the rebuilding of a version asked for
 * cold, on the history thread (jobs.ts), shared by every request waiting for
 * it. Nothing here runs on a request's path unless the request asks for a
 * past moment.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { IndexReader } from '../reader.ts';
import { HistoryError, historySizeBytes, readCatalog, versionAt, type HistoryCatalog, type HistoryVersion } from './store.ts';
import type { HistoryJobs } from './jobs.ts';

/** Past indexes kept mapped per thread (mapped files are page cache, not heap: docs/deployment.md). */
export const MAPPED_PAST = 2;
/** Rebuilds waited for at once per thread: past that, a cold moment is refused (503) rather than queued, so no caller can line up the history thread's work. */
export const MAX_PENDING_REBUILDS = 2;

/** Where the history is kept and for how long (IPINTEL_HISTORY, IPINTEL_HISTORY_DIR). */
export interface HistoryConfig {
  dir: string;
  retentionMs: number;
}

/** The moments a past answer can be asked for, ms. */
export interface HistoryRange {
  fromMs: number;
  toMs: number;
}

/** What /v1/data/status shows of the history. */
export interface HistoryStatus {
  retention_ms: number;
  from: string | null;
  to: string | null;
  versions: number;
  size_bytes: number;
  /** false: the catalog cannot be read. */
  readable: boolean;
  /** Why the catalog cannot be read, else why the last recording failed. */
  error: string | null;
}

/** The retained history as one serving thread reads it. */
export class PastIndexes {
  private stamp = '';
  private cached: HistoryCatalog | null = null;
  private lastError: string | null = null;
  /** Why the last recording failed (null: it did not, or none was made by this thread). */
  private recordError: string | null = null;
  private readonly mapped = new Map<string, IndexReader>();
  private readonly rebuilding = new Map<string, Promise<IndexReader>>();

  constructor(
    readonly config: HistoryConfig,
    /** The history thread this view rebuilds on (and its thread's recorder records on). */
    readonly jobs: HistoryJobs,
  ) {}

  /** Stops the history thread. */
  close(): void {
    this.jobs.close();
  }

  /** The catalog (read again when its file changed); throws HistoryError for an unreadable one, and remembers why for the status. */
  catalog(): HistoryCatalog {
    const s = statSync(join(this.config.dir, 'catalog.json'), { throwIfNoEntry: false });
    const stamp = s ? `${s.mtimeMs}:${s.size}:${s.ino}` : 'none';
    if (stamp === this.stamp && this.cached) return this.cached;
    try {
      this.cached = readCatalog(this.config.dir);
      this.stamp = stamp;
      this.lastError = null;
      return this.cached;
    } catch (e) {
      this.lastError = (e as Error).message;
      throw e;
    }
  }

  /** The moments answerable at `nowMs`: from the first retained version (no earlier than the retention allows) to now; null when nothing is retained. */
  range(catalog: HistoryCatalog, nowMs: number): HistoryRange | null {
    const first = catalog.versions[0];
    if (!first) return null;
    return { fromMs: Math.max(first.servedFromMs, nowMs - this.config.retentionMs), toMs: nowMs };
  }

  /** The version served at `ms` (null before the first). */
  versionAt(catalog: HistoryCatalog, ms: number): HistoryVersion | null {
    return versionAt(catalog, ms);
  }

  /** The mapped index of a version: at once when it is mapped, else once it is rebuilt (on the history thread) or found rebuilt. */
  readerOf(version: HistoryVersion): IndexReader | Promise<IndexReader> {
    const kept = this.mapped.get(version.id);
    if (kept) {
      this.mapped.delete(version.id);
      this.mapped.set(version.id, kept);
      return kept;
    }
    let pending = this.rebuilding.get(version.id);
    if (!pending && this.rebuilding.size >= MAX_PENDING_REBUILDS) {
      return Promise.reject(new HistoryError(`${MAX_PENDING_REBUILDS} past indexes are being rebuilt already; retry in a few seconds`));
    }
    if (!pending) {
      const out = join(this.config.dir, 'cache', `${version.id.slice(0, 32)}.idx`);
      pending = this.jobs
        .run<string>({ op: 'rebuild', dir: this.config.dir, id: version.id, out })
        // Checked whole (its XXH3 against the catalog's) on the history thread: here only its header and layout are, so mapping it costs this thread no full read.
        .then((path) => this.keep(version.id, IndexReader.open(path, { verifyChecksums: false })))
        .finally(() => this.rebuilding.delete(version.id));
      this.rebuilding.set(version.id, pending);
    }
    return pending;
  }

  private keep(id: string, reader: IndexReader): IndexReader {
    this.mapped.set(id, reader);
    // The oldest mapping is dropped; the collector unmaps it once no request holds it.
    if (this.mapped.size > MAPPED_PAST) this.mapped.delete(this.mapped.keys().next().value!);
    return reader;
  }

  /** The retained range, its size and what went wrong reading it, for /v1/data/status. */
  status(nowMs: number): HistoryStatus {
    let catalog: HistoryCatalog | null = null;
    try {
      catalog = this.catalog();
    } catch {
      // lastError says why
    }
    const range = catalog ? this.range(catalog, nowMs) : null;
    return {
      retention_ms: this.config.retentionMs,
      from: range ? new Date(range.fromMs).toISOString() : null,
      to: range ? new Date(range.toMs).toISOString() : null,
      versions: catalog?.versions.length ?? 0,
      size_bytes: historySizeBytes(this.config.dir),
      readable: this.lastError === null,
      error: this.lastError ?? this.recordError,
    };
  }

  /** Remembers how this thread's last recording went (null: it succeeded), for the status. */
  reportRecording(error: string | null): void {
    this.recordError = error;
  }
}
