/**
 * Reading one feed file: streaming lines (gzip transparently), whole-file
 * text for small JSON documents, and error reporting by file and line.
 */
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { Transform } from 'node:stream';
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

/** A copy past one of its read bounds (size, inflation, line length, count): the reason is a category and numbers, never the copy's bytes. */
export class FeedLimitError extends FeedError {
  constructor(file: string, line: number | undefined, reason: string) {
    super(file, line, reason);
    this.name = 'FeedLimitError';
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

/**
 * Bounds on reading one untrusted copy (the feed updater's validation sets
 * them; a build of accepted copies reads without). A copy past a bound fails
 * as a FeedError whose reason is a fixed category, never the copy's bytes.
 */
export interface ReadLimits {
  /** Most bytes the parser reads (after gunzip for `.gz`). */
  maxBytes: number;
  /** A `.gz` copy inflating to more than this many times its size is refused (a gzip bomb). */
  maxRatio: number;
  /** Longest line read, in bytes (a line-based parser buffers a whole line). */
  maxLineBytes: number;
  /** Most ranges (or entries a parser holds before reporting them) a copy may have. */
  maxRanges: number;
}

/** Floor of the ratio bound, so a tiny .gz of a sparse file is not refused. */
const MIN_INFLATED_ALLOWANCE = 1 << 20;

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
  /** Read bounds of an untrusted copy (null: a trusted build input, unbounded). */
  readLimits: ReadLimits | null = null;

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

  /** Fails the copy when a parser that aggregates before reporting holds more than its range bound (the bound of an untrusted copy only). */
  checkHeld(entries: number, line?: number): void {
    const max = this.readLimits?.maxRanges;
    if (max !== undefined && entries > max) throw new FeedLimitError(this.displayPath, line, `more than ${max} ranges (the bound for ${this.options.type})`);
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

  /** Most bytes this copy may yield once inflated, or Infinity when unbounded. */
  private maxReadBytes(): number {
    const l = this.readLimits;
    if (!l) return Infinity;
    if (!this.path.endsWith('.gz')) return l.maxBytes;
    let compressed = 0;
    try {
      compressed = statSync(this.path).size;
    } catch {
      // Unreadable: the read fails with its own message.
    }
    return Math.min(l.maxBytes, Math.max(MIN_INFLATED_ALLOWANCE, compressed * l.maxRatio));
  }

  /** The failure of a copy past its read bound (no byte of the copy in it). */
  private tooLarge(max: number, line?: number): never {
    throw new FeedLimitError(this.displayPath, line, `${this.path.endsWith('.gz') ? 'decompresses to' : 'is'} more than ${max} bytes (the bound for this feed)`);
  }

  /** The failure of a line past the line bound. */
  private lineTooLong(max: number, line: number): never {
    throw new FeedLimitError(this.displayPath, line, `a line longer than ${max} bytes`);
  }

  /** The file's bytes, gunzipped for `.gz` and passed through `bounded` when given; `raw` is the file stream to destroy. */
  private openInput(bounded: BoundedReader | null): { raw: ReturnType<typeof createReadStream>; input: NodeJS.ReadableStream } {
    const raw = createReadStream(this.path);
    // Each stage's error is passed on: a truncated gzip or an unreadable file must reach the reader, or it waits forever (pipe() does not forward errors).
    let input: NodeJS.ReadableStream = raw;
    const then = <T extends NodeJS.ReadWriteStream & { destroy(e?: Error): unknown }>(next: T): void => {
      input.on('error', (e: Error) => next.destroy(e));
      input = input.pipe(next);
    };
    if (this.path.endsWith('.gz')) then(createGunzip());
    if (bounded) then(bounded);
    return { raw, input };
  }

  /** Streams the file's lines (1-based numbers), gunzipping `.gz` files. */
  async *lines(): AsyncGenerator<[text: string, lineNo: number]> {
    const bounded = this.readLimits ? new BoundedReader(this.maxReadBytes(), this.readLimits.maxLineBytes) : null;
    const { raw, input } = this.openInput(bounded);
    const rl = createInterface({ input, crlfDelay: Infinity });
    let n = 0;
    try {
      for await (const line of rl) {
        n++;
        // JSC sizes its young generation by the heap, which a full build makes large: a parser
        // that aggregates before reporting (ris-whois) reaches none of the collector's collection
        // points, so the lines' garbage is collected here, young generation, every 16 K lines.
        if ((n & 0x3fff) === 0) Bun.gc(false);
        yield [line, n];
      }
    } catch (e) {
      this.failIfExceeded(bounded);
      this.fail(`cannot read: ${(e as Error).message}`, n || undefined);
    } finally {
      // An early stop (a refusal, a parse error) must not leave the gunzip running.
      raw.destroy();
    }
    this.failIfExceeded(bounded);
  }

  /** Fails the copy when its bounded reader stopped it past a bound (a no-op otherwise). */
  private failIfExceeded(bounded: BoundedReader | null): void {
    if (bounded?.exceeded === 'bytes') this.tooLarge(bounded.maxBytes);
    if (bounded?.exceeded === 'line') this.lineTooLong(bounded.maxLineBytes, bounded.lineNo);
  }

  /** The first character that is not white space (a format sniff that reads no further than it); '' for a blank file. */
  async firstDataChar(): Promise<string> {
    const { raw, input } = this.openInput(null);
    let first = true;
    try {
      for await (const chunk of input as AsyncIterable<Buffer>) {
        // A UTF-8 byte order mark is not data.
        const text = chunk.toString('latin1', first && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0);
        first = false;
        const m = /\S/.exec(text);
        if (m) return m[0];
      }
      return '';
    } catch (e) {
      this.fail(`cannot read: ${(e as Error).message}`);
    } finally {
      raw.destroy();
    }
  }

  /** The whole file as bytes, gunzipped for `.gz`, within the read bound. */
  private readBounded(): Buffer {
    const max = this.maxReadBytes();
    let buf: Buffer;
    try {
      if (Number.isFinite(max) && !this.path.endsWith('.gz') && statSync(this.path).size > max) this.tooLarge(max);
      buf = readFileSync(this.path);
      if (!this.path.endsWith('.gz')) return buf;
      return Number.isFinite(max) ? gunzipSync(buf, { maxOutputLength: max }) : gunzipSync(buf);
    } catch (e) {
      if (e instanceof FeedError) throw e;
      if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') this.tooLarge(max);
      this.fail(`cannot read: ${(e as Error).message}`);
    }
  }

  /** The whole file as text (for small JSON documents), gunzipping `.gz` files. */
  readText(): string {
    return this.readBounded().toString('utf8');
  }

  /** The whole file as bytes (binary formats such as MMDB). */
  readBytes(): Uint8Array {
    return this.readBounded();
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

/** Passes bytes through while they stay within a byte budget and a line length; stops the stream past either. */
class BoundedReader extends Transform {
  private seen = 0;
  private run = 0;
  /** Newlines passed so far: the over-long line is the next one. */
  private newlines = 0;
  exceeded: 'bytes' | 'line' | null = null;

  /** The 1-based number of the line being read. */
  get lineNo(): number {
    return this.newlines + 1;
  }

  constructor(
    readonly maxBytes: number,
    readonly maxLineBytes: number,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: (e?: Error | null, data?: Buffer) => void): void {
    this.seen += chunk.length;
    if (this.seen > this.maxBytes) {
      this.exceeded = 'bytes';
      return done(new Error('read bound exceeded'));
    }
    let from = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, from)) {
      if (this.run + nl - from > this.maxLineBytes) break;
      this.run = 0;
      this.newlines++;
      from = nl + 1;
    }
    this.run += chunk.length - from;
    if (this.run > this.maxLineBytes) {
      this.exceeded = 'line';
      return done(new Error('line bound exceeded'));
    }
    done(null, chunk);
  }
}

/** A parser of one manifest type. */
export type FeedParser = (ctx: SourceContext, sink: import('../sink.ts').BuildSink) => Promise<void>;
