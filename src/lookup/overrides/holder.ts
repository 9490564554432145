/**
 * The overrides in force, re-read at start, on /reload and when the file
 * changes. The file is watched by polling its size, mtime and inode every
 * few seconds (one stat, bounded; fs.watch loses a file an editor replaces
 * by rename). A serving thread never reads it: a read runs on a thread of
 * its own (off-thread.ts), and with several workers once per host, in the
 * primary, which hands the table's shared memory to every worker (apply).
 * A bad line is reported and skipped; a file refused as a whole
 * (unreadable, no regular file, garbled, over the limits or the memory
 * budget) keeps the overrides in force.
 */
import { statSync } from 'node:fs';
import { MAX_OVERRIDE_FILE_BYTES } from '../../contract/overrides.ts';
import type { IndexReader } from '../../index/reader.ts';
import { embeddedOverrides } from './embedded.ts';
import { overridesOver, type OverrideLookup } from './layered.ts';
import { coverageText, readOverridesFile, type OverridesLimits, type OverridesRead, type OverridesReadReport } from './load.ts';
import { readOverridesOffThread } from './off-thread.ts';
import { OverrideTable } from './table.ts';

/** How often the file's stat is compared. */
export const OVERRIDES_POLL_MS = 2_000;

/** What the table may hold when no budget is given (src/memory-budget.ts DEFAULT_OVERRIDES_BYTES). */
const DEFAULT_TABLE_BYTES = 128 * 1048576;

/** What the last read did. */
export interface OverridesLoad extends OverridesReadReport {
  generation: number;
  loadedAt: string;
}

/** An applied read as the primary hands it to a worker (the table's memory is shared, not copied). */
export interface PublishedOverrides {
  read: OverridesRead;
  generation: number;
}

type Log = (line: string) => void;

/** Holds the overrides table of one thread. */
export class OverridesHolder {
  private table: OverrideTable = OverrideTable.EMPTY;
  private timer: ReturnType<typeof setInterval> | null = null;
  private seen = '';
  private reading: Promise<OverridesLoad> | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  /** Bumped on every applied read: memos of answers start over when it changes. */
  generation = 0;
  /** The last read (null before any, or without a file). */
  last: OverridesLoad | null = null;
  /** The last applied read, to hand to a worker that starts later. */
  published: PublishedOverrides | null = null;
  private readonly listeners: (() => void)[] = [];
  private readonly limits: OverridesLimits;

  constructor(
    /** The file (null: no overrides). */
    readonly path: string | null,
    private readonly log: Log = (line) => console.error(line),
    limits: Partial<OverridesLimits> = {},
  ) {
    this.limits = { maxFileBytes: limits.maxFileBytes ?? MAX_OVERRIDE_FILE_BYTES, maxTableBytes: limits.maxTableBytes ?? DEFAULT_TABLE_BYTES };
  }

  /** Reads the file at once on this thread (CLI tools, which serve nothing); never throws. */
  static open(path: string | null, log?: Log, limits?: Partial<OverridesLimits>): OverridesHolder {
    const h = new OverridesHolder(path, log, limits);
    if (path !== null) h.reload();
    return h;
  }

  /** Reads the file on a thread of its own and resolves once it is applied or refused (a serving thread's start); never rejects. */
  static async start(path: string | null, log?: Log, limits?: Partial<OverridesLimits>): Promise<OverridesHolder> {
    const h = new OverridesHolder(path, log, limits);
    if (path !== null) await h.reloadOffThread();
    return h;
  }

  /** The table of the file (without an index's own overrides: see tableFor). */
  get current(): OverrideTable {
    return this.table;
  }

  /**
   * The overrides a lookup on `index` applies: the file's, and the index's
   * own (a build's `overrides` sources) where the file names no more
   * specific prefix; for the same prefix the file wins (layered.ts: asked
   * in turn, never combined into one table on a serving thread).
   */
  lookupFor(index: IndexReader): OverrideLookup {
    return overridesOver(this.table, embeddedOverrides(index));
  }

  /** The same overrides as one table (exports, which read its intervals; built here, so not for a serving thread). */
  tableFor(index: IndexReader): OverrideTable {
    const own = embeddedOverrides(index);
    return own.size === 0 ? this.table : this.table.size === 0 ? own : OverrideTable.build([...own.toEntries(), ...this.table.toEntries()]);
  }

  /** Calls `listener` after every applied read (a new serving snapshot, src/lookup/serving.ts). */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Reads the file again on this thread (CLI tools); keeps the previous overrides when it is refused. Never throws. */
  reload(): OverridesLoad {
    const path = this.requirePath();
    this.seen = this.stamp();
    return this.take(readOverridesFile(path, this.limits));
  }

  /** Reads the file again on a thread of its own, after any read under way; keeps the previous overrides when it is refused. Never rejects. */
  reloadOffThread(): Promise<OverridesLoad> {
    const path = this.requirePath();
    const next = this.queue.then(async () => {
      this.seen = this.stamp();
      return this.take(await readOverridesOffThread(path, this.limits));
    });
    // A read that failed outright never stalls the ones after it.
    this.queue = next.catch(() => undefined);
    this.reading = next;
    void next.finally(() => {
      if (this.reading === next) this.reading = null;
    });
    return next;
  }

  /** Takes a read made elsewhere (the primary's, for a worker): its table and generation. */
  apply(published: PublishedOverrides): OverridesLoad {
    return this.take(published.read, published.generation);
  }

  private take(read: OverridesRead, generation?: number): OverridesLoad {
    const path = read.report.path;
    let load: OverridesLoad;
    if (read.parts !== null) {
      this.table = OverrideTable.fromParts(read.parts);
      this.generation = generation ?? this.generation + 1;
      this.published = { read, generation: this.generation };
      load = { ...read.report, generation: this.generation, loadedAt: new Date().toISOString() };
      const r = read.report;
      this.log(`overrides: ${path}: ${r.entries} entries applied (generation ${this.generation}), ${coverageText(r.covers!)}, ${(r.tableBytes / 1048576).toFixed(1)} MiB${r.badLines > 0 ? `, ${r.badLines} bad line(s) skipped` : ''}`);
      for (const e of r.errors) this.log(`overrides: ${path}:${e.line}: ${e.message}`);
    } else {
      load = { ...read.report, entries: this.table.size, generation: this.generation, loadedAt: new Date().toISOString() };
      this.log(`overrides: refused, the ${this.table.size} entries in force stay: ${read.report.refused}`);
    }
    this.last = load;
    if (load.applied) for (const listener of this.listeners) listener();
    return load;
  }

  /** Polls the file every `everyMs` and re-reads it (off this thread) when its size, mtime or inode changed. */
  watch(everyMs: number = OVERRIDES_POLL_MS): void {
    if (this.path === null || this.timer !== null) return;
    this.timer = setInterval(() => {
      if (this.reading === null && this.stamp() !== this.seen) void this.reloadOffThread();
    }, everyMs);
    // Never keeps a process (a test, a tool) alive.
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Stops watching. */
  close(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private requirePath(): string {
    if (this.path === null) throw new Error('no overrides file is configured');
    return this.path;
  }

  /** The file's identity and size; a stat never blocks, whatever the file is. */
  private stamp(): string {
    try {
      const s = statSync(this.path!, { bigint: true });
      return `${s.ino}:${s.size}:${s.mtimeNs}`;
    } catch {
      return 'missing';
    }
  }
}
