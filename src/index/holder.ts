/**
 * Holds the live index and swaps it atomically on reload; a file that fails
 * verification is refused and the old index keeps serving. Every change (a
 * swap, a kind turning stale) is told to the listeners, which publish a new
 * serving snapshot (src/lookup/serving.ts): requests read that once and keep
 * it, so requests in flight finish on the old index.
 */
import { coverageOf, sameCoverage, type Coverage } from './coverage.ts';
import { IndexReader } from './reader.ts';

export interface ReloadResult {
  path: string;
  builtAt: string;
  v4Intervals: number;
  v6Intervals: number;
  records: number;
  sizeBytes: number;
  loadedAt: string;
  generation: number;
}

/** How long a replaced index may go on serving requests in flight before its memory is reclaimed. */
const RELEASE_DELAY_MS = 2_000;

/**
 * How often a running server re-reads the age of its sources: the shortest
 * staleness threshold is a day, so a source turns stale at most this late.
 */
export const COVERAGE_REFRESH_MS = 10 * 60_000;

export class IndexHolder {
  private reader: IndexReader;
  private loadedAtMs: number;
  private releaseTimer: ReturnType<typeof setTimeout> | null = null;
  private coverageNow: Coverage;
  private readonly listeners: (() => void)[] = [];
  /** Bumped on every successful swap (metrics, ETags). */
  generation = 1;

  constructor(
    reader: IndexReader,
    private path: string,
    /** Clock of the staleness checks (tests inject one). */
    private readonly clock: () => number = Date.now,
  ) {
    this.reader = reader;
    this.loadedAtMs = Date.now();
    this.coverageNow = coverageOf(reader.meta, this.clock());
    startCoverageTimer(new WeakRef(this));
  }

  /**
   * What the current index holds and which of its kinds are stale: scoring's
   * input, one object per index and staleness state (memos of scored answers
   * start over when it changes). Recomputed at load and every
   * COVERAGE_REFRESH_MS, never per request.
   */
  get coverage(): Coverage {
    return this.coverageNow;
  }

  /** Re-reads the sources' ages; the object changes (and listeners hear of it) only when a kind turned stale. */
  refreshCoverage(): void {
    const next = coverageOf(this.reader.meta, this.clock());
    if (sameCoverage(next, this.coverageNow)) return;
    this.coverageNow = next;
    this.changed();
  }

  /** Calls `listener` after every swap and coverage change. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  /** Opens the file at `path` (throws IndexFileError when refused); `clock` dates the staleness checks. */
  static open(path: string, clock: () => number = Date.now): IndexHolder {
    return new IndexHolder(IndexReader.open(path), path, clock);
  }

  /** The reader serving new requests. */
  get current(): IndexReader {
    return this.reader;
  }

  get loadedAt(): number {
    return this.loadedAtMs;
  }

  /** Maps and verifies `path` (default: the current file), then swaps it in as `generation` (default: the next). Throws and keeps the old index on failure. */
  reload(path: string = this.path, generation: number = this.generation + 1): ReloadResult {
    const next = IndexReader.open(path);
    this.reader = next;
    this.coverageNow = coverageOf(next.meta, this.clock());
    this.path = path;
    this.loadedAtMs = Date.now();
    this.generation = generation;
    this.changed();
    this.scheduleRelease();
    return this.describe();
  }

  /**
   * Bun has no munmap: a replaced file stays mapped until the garbage
   * collector finalizes its reader, and a quiet server may not collect for
   * hours, keeping every replaced index resident and its unlinked file's
   * disk blocks allocated (docs/reliability.md). One full collection a
   * moment after the last swap releases them; the delay lets requests still
   * on the old reader finish and folds a burst of reloads into one pause.
   */
  private scheduleRelease(): void {
    if (this.releaseTimer) clearTimeout(this.releaseTimer);
    this.releaseTimer = setTimeout(() => {
      this.releaseTimer = null;
      Bun.gc(true);
    }, RELEASE_DELAY_MS);
    // Never keeps a process (a test, a tool) alive.
    (this.releaseTimer as { unref?: () => void }).unref?.();
  }

  /** What is loaded now. */
  describe(): ReloadResult {
    const m = this.reader.meta;
    return {
      path: this.path,
      builtAt: m.builtAt,
      v4Intervals: m.counts.v4Intervals,
      v6Intervals: m.counts.v6Intervals,
      records: m.counts.records,
      sizeBytes: this.reader.file.sizeBytes,
      loadedAt: new Date(this.loadedAtMs).toISOString(),
      generation: this.generation,
    };
  }
}

/** Refreshes a holder's coverage on a coarse timer while the holder lives (a dropped holder is not kept alive by it). */
function startCoverageTimer(holder: WeakRef<IndexHolder>): void {
  const timer = setInterval(() => {
    const h = holder.deref();
    if (h) h.refreshCoverage();
    else clearInterval(timer);
  }, COVERAGE_REFRESH_MS);
  // Never keeps a process (a test, a tool) alive.
  (timer as { unref?: () => void }).unref?.();
}
