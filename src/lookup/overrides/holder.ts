/**
 * The overrides in force, re-read at start, on /reload and when the file
 * changes. The file is watched by polling its size, mtime and inode every
 * few seconds (one stat, bounded; fs.watch loses a file an editor replaces
 * by rename). A bad line is reported and skipped; a file refused as a whole
 * (unreadable, garbled, over the limits) keeps the overrides in force.
 */
import { readFileSync, statSync } from 'node:fs';
import { MAX_OVERRIDE_FILE_BYTES, OverridesFileError, readOverridesText, type OverrideLineError } from '../../contract/overrides.ts';
import type { IndexReader } from '../../index/reader.ts';
import { embeddedOverrides } from './embedded.ts';
import { OverrideColumns, OverrideTable } from './table.ts';

/** Entries from which a load collects its parse's garbage before building. */
const LARGE_LOAD = 100_000;

/** How often the file's stat is compared. */
export const OVERRIDES_POLL_MS = 2_000;

/** What the last read did. */
export interface OverridesLoad {
  path: string;
  /** The file was applied (false: refused, the previous overrides stay). */
  applied: boolean;
  entries: number;
  /** Lines skipped (bad); their first messages are in `errors`. */
  badLines: number;
  errors: OverrideLineError[];
  /** Why the file was refused, when it was. */
  refused: string | null;
  generation: number;
  loadedAt: string;
}

type Log = (line: string) => void;

/** Holds the overrides table of one process. */
export class OverridesHolder {
  private table: OverrideTable = OverrideTable.EMPTY;
  private timer: ReturnType<typeof setInterval> | null = null;
  private seen = '';
  /** Bumped on every applied read: memos of answers start over when it changes. */
  generation = 0;
  /** The last read (null before any, or without a file). */
  last: OverridesLoad | null = null;
  private readonly listeners: (() => void)[] = [];

  constructor(
    /** The file (null: no overrides). */
    readonly path: string | null,
    private readonly log: Log = (line) => console.error(line),
    private readonly maxFileBytes = MAX_OVERRIDE_FILE_BYTES,
  ) {}

  /** Reads the file at once (when one is named); never throws. */
  static open(path: string | null, log?: Log): OverridesHolder {
    const h = new OverridesHolder(path, log);
    if (path !== null) h.reload();
    return h;
  }

  /** The table of the file (without an index's own overrides: see tableFor). */
  get current(): OverrideTable {
    return this.table;
  }

  private combined: { index: IndexReader; generation: number; table: OverrideTable } | null = null;

  /**
   * The overrides a lookup on `index` applies: the file's, and the index's
   * own (a build's `overrides` sources) where the file names no more
   * specific prefix; for the same prefix the file wins. One table, so the
   * most specific entry wins across both; combined once per index and file
   * generation.
   */
  tableFor(index: IndexReader): OverrideTable {
    const c = this.combined;
    if (c !== null && c.index === index && c.generation === this.generation) return c.table;
    const own = embeddedOverrides(index);
    const table = own.size === 0 ? this.table : this.table.size === 0 ? own : OverrideTable.build([...own.toEntries(), ...this.table.toEntries()]);
    this.combined = { index, generation: this.generation, table };
    return table;
  }

  /** Calls `listener` after every applied read (a new serving snapshot, src/lookup/serving.ts). */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Reads the file again; keeps the previous overrides when it is refused. Never throws. */
  reload(): OverridesLoad {
    const path = this.path;
    if (path === null) throw new Error('no overrides file is configured');
    this.seen = this.stamp();
    let load: OverridesLoad;
    try {
      const size = statSync(path).size;
      if (size > this.maxFileBytes) throw new OverridesFileError(path, `is ${size} bytes, over the limit of ${this.maxFileBytes}`);
      // Entries go into columns as they are read: no object per line is kept.
      const columns = new OverrideColumns();
      const parsed = readOverridesText(readFileSync(path, 'utf8'), path, (e) => columns.add(e));
      // The parse's garbage (a few hundred bytes a line) goes before the build makes its own: the peak is the larger, not the sum.
      if (columns.count >= LARGE_LOAD) Bun.gc(true);
      const { table, replaced } = OverrideTable.fromColumns(columns);
      const errors = parsed.errors.concat(replaced.slice(0, Math.max(0, 100 - parsed.errors.length)).map((r) => ({ line: r.line, message: `the same prefix again on line ${r.by}, which wins` })));
      this.table = table;
      this.generation++;
      load = { path, applied: true, entries: table.size, badLines: parsed.badLines, errors, refused: null, generation: this.generation, loadedAt: new Date().toISOString() };
      this.log(`overrides: ${path}: ${table.size} entries applied (generation ${this.generation})${parsed.badLines > 0 ? `, ${parsed.badLines} bad line(s) skipped` : ''}`);
      for (const e of errors) this.log(`overrides: ${path}:${e.line}: ${e.message}`);
    } catch (e) {
      const why = e instanceof OverridesFileError ? e.message : `${path}: ${(e as Error).message}`;
      load = { path, applied: false, entries: this.table.size, badLines: 0, errors: [], refused: why, generation: this.generation, loadedAt: new Date().toISOString() };
      this.log(`overrides: refused, the ${this.table.size} entries in force stay: ${why}`);
    }
    this.last = load;
    if (load.applied) for (const listener of this.listeners) listener();
    return load;
  }

  /** Polls the file every `everyMs` and re-reads it when its size, mtime or inode changed. */
  watch(everyMs: number = OVERRIDES_POLL_MS): void {
    if (this.path === null || this.timer !== null) return;
    this.timer = setInterval(() => {
      if (this.stamp() !== this.seen) this.reload();
    }, everyMs);
    // Never keeps a process (a test, a tool) alive.
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Stops watching. */
  close(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private stamp(): string {
    try {
      const s = statSync(this.path!, { bigint: true });
      return `${s.ino}:${s.size}:${s.mtimeNs}`;
    } catch {
      return 'missing';
    }
  }
}
