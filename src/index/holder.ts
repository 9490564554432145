/**
 * Holds the live index and swaps it atomically on reload. A request reads
 * `holder.current` once and keeps that reader, so requests in flight finish
 * on the old index; a file that fails verification is refused and the old
 * index keeps serving.
 */
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

export class IndexHolder {
  private reader: IndexReader;
  private loadedAtMs: number;
  /** Bumped on every successful swap (metrics, ETags). */
  generation = 1;

  constructor(
    reader: IndexReader,
    private path: string,
  ) {
    this.reader = reader;
    this.loadedAtMs = Date.now();
  }

  /** Opens the file at `path` (throws IndexFileError when refused). */
  static open(path: string): IndexHolder {
    return new IndexHolder(IndexReader.open(path), path);
  }

  /** The reader serving new requests. */
  get current(): IndexReader {
    return this.reader;
  }

  get loadedAt(): number {
    return this.loadedAtMs;
  }

  /** Maps and verifies `path` (default: the current file), then swaps it in. Throws and keeps the old index on failure. */
  reload(path: string = this.path): ReloadResult {
    const next = IndexReader.open(path);
    this.reader = next;
    this.path = path;
    this.loadedAtMs = Date.now();
    this.generation++;
    return this.describe();
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
