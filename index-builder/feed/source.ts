/**
 * Reading one feed file: streaming lines (gzip transparently), whole-file
 * text for small JSON documents, and error reporting by file and line.
 */
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { createGunzip, gunzipSync } from 'node:zlib';
import { createInterface } from 'node:readline';
import type { ManifestSource } from '../sink.ts';

/** A structural error in a feed: the build fails with file and line. */
export class FeedError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly reason: string,
  ) {
    super(line === undefined ? `${file}: ${reason}` : `${file}:${line}: ${reason}`);
    this.name = 'FeedError';
  }
}

/** A line skipped as malformed, kept for the build summary. */
export interface SkippedLine {
  line: number;
  reason: string;
}

/** Where a source's date came from: the file's own header/fields, the manifest `date`, or the file's mtime. */
export type SourceDateOrigin = 'file' | 'manifest' | 'mtime';

/** Dates before this are not believed (a zero epoch or a misread field). */
const EARLIEST_DATE_MS = Date.UTC(1990, 0, 1);

/** A date in any form a feed writes it (Date, epoch seconds, ISO text) as epoch ms; NaN when unreadable. */
export function dateMs(value: Date | number | string): number {
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'number') return value * 1000;
  const text = value.trim();
  if (/^\d{9,11}$/.test(text)) return Number(text) * 1000;
  if (/^\d{8}$/.test(text)) return Date.UTC(Number(text.slice(0, 4)), Number(text.slice(4, 6)) - 1, Number(text.slice(6, 8)));
  // `YYYY-MM-DD hh:mm:ss` without a zone is UTC in every feed that writes it.
  const iso = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text) ? `${text.replace(' ', 'T')}Z` : text;
  return Date.parse(iso);
}

/** The most skipped lines a source may report before they are only counted. */
const MAX_SKIP_SAMPLES = 20;

/** One source being parsed: its path, manifest options, and counters. */
export class SourceContext {
  /** Rows (ranges or records) the parser reported. */
  rows = 0;
  skipped = 0;
  readonly skipSamples: SkippedLine[] = [];
  /** Newest date the file itself states (epoch ms), NaN until a parser reports one. */
  private fileDateMs = NaN;

  constructor(
    /** Absolute path of the file. */
    readonly path: string,
    /** Path as written in the manifest (for messages). */
    readonly displayPath: string,
    readonly options: ManifestSource,
  ) {}

  /**
   * Reports a date the file states about its data (a header, a generation
   * time, a per-entry timestamp); the newest reported one is the source's date.
   * An unreadable or implausible value is ignored: the fallback dates remain.
   */
  reportDate(value: Date | number | string): void {
    const ms = dateMs(value);
    if (!Number.isFinite(ms) || ms < EARLIEST_DATE_MS) return;
    if (!(ms <= this.fileDateMs)) this.fileDateMs = ms;
  }

  /** The source's date: the file's own, else the manifest `date`, else the file's mtime. */
  get date(): { at: string; from: SourceDateOrigin } {
    if (Number.isFinite(this.fileDateMs)) return { at: new Date(this.fileDateMs).toISOString(), from: 'file' };
    const manifest = this.options.date;
    if (typeof manifest === 'string' && Number.isFinite(dateMs(manifest))) return { at: new Date(dateMs(manifest)).toISOString(), from: 'manifest' };
    let mtime = 0;
    try {
      mtime = statSync(this.path).mtimeMs;
    } catch {
      // An unreadable file fails in the parser with a clear message; its date does not matter.
    }
    return { at: new Date(mtime).toISOString(), from: 'mtime' };
  }

  /** Records a malformed line that is skipped (the build continues). */
  skip(line: number, reason: string): void {
    this.skipped++;
    if (this.skipSamples.length < MAX_SKIP_SAMPLES) this.skipSamples.push({ line, reason });
  }

  /** Throws a structural error naming this file (and line when given). */
  fail(reason: string, line?: number): never {
    throw new FeedError(this.displayPath, line, reason);
  }

  /** A required manifest option (e.g. `category`), or a clear error. */
  requireOption(name: string): string {
    const v = this.options[name];
    if (typeof v !== 'string' || v === '') this.fail(`manifest entry of type ${this.options.type} needs "${name}"`);
    return v;
  }

  /** Streams the file's lines (1-based numbers), gunzipping `.gz` files. */
  async *lines(): AsyncGenerator<[text: string, lineNo: number]> {
    const raw = createReadStream(this.path);
    const input = this.path.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
    const rl = createInterface({ input, crlfDelay: Infinity });
    let n = 0;
    try {
      for await (const line of rl) {
        n++;
        yield [line, n];
      }
    } catch (e) {
      this.fail(`cannot read: ${(e as Error).message}`, n || undefined);
    }
  }

  /** The whole file as text (for small JSON documents), gunzipping `.gz` files. */
  readText(): string {
    try {
      const buf = readFileSync(this.path);
      return (this.path.endsWith('.gz') ? gunzipSync(buf) : buf).toString('utf8');
    } catch (e) {
      this.fail(`cannot read: ${(e as Error).message}`);
    }
  }

  /** The whole file as bytes (binary formats such as MMDB). */
  readBytes(): Uint8Array {
    try {
      const buf = readFileSync(this.path);
      return this.path.endsWith('.gz') ? gunzipSync(buf) : buf;
    } catch (e) {
      this.fail(`cannot read: ${(e as Error).message}`);
    }
  }

  /** Parses the file as one JSON document; a syntax error names the file. */
  readJson<T = unknown>(): T {
    const text = this.readText();
    try {
      return JSON.parse(text) as T;
    } catch (e) {
      this.fail(`invalid JSON: ${(e as Error).message}`);
    }
  }
}

/** A parser of one manifest type. */
export type FeedParser = (ctx: SourceContext, sink: import('../sink.ts').BuildSink) => Promise<void>;
