/**
 * The previous index a build keeps the ids of (stable ids, merge/stable-ids.ts):
 * opened with the server's own checks (header, layout, META) and every
 * section's checksum, then read a section at a time from the disk, never
 * mapped whole (its pages would count towards the build's memory). A file
 * that is missing, does not verify, has another format version or carries
 * too much garbage is not used: the build numbers afresh (compacts).
 */
import { closeSync, openSync } from 'node:fs';
import { Section, type IndexMeta } from '../../src/index/format.ts';
import { checkStringTable } from '../merge/string-pool.ts';
import { mapIndexFile } from '../../src/index/map-index-file.ts';
import { readDirectory, readFully, verifySectionChecksums, type DirectoryEntry } from './verify-file.ts';

/**
 * Above this share of dead records, dead sub-table rows or dead string bytes
 * in the previous file, a build ignores it and numbers afresh (compacts): the
 * garbage a file carries stays below this share plus one build's churn.
 */
export const MAX_DEAD_SHARE = 0.2;

/** Rows read per chunk when a large section is streamed. */
const CHUNK_BYTES = 4 << 20;

export class PreviousIndex {
  private constructor(
    readonly path: string,
    readonly meta: IndexMeta,
    private readonly fd: number,
    private readonly sections: Map<string, DirectoryEntry>,
  ) {}

  /**
   * Opens and verifies `path`; null (after one log line saying why) when it
   * cannot serve as the previous index, in which case the build numbers afresh.
   */
  static open(path: string, log: (line: string) => void): PreviousIndex | null {
    let fd = -1;
    try {
      const meta = mapIndexFile(path, { verifyChecksums: false }).meta;
      verifySectionChecksums(path);
      const garbage = garbageShare(meta);
      if (garbage) throw new Error(`${garbage} (more than ${MAX_DEAD_SHARE * 100} %): compacting`);
      fd = openSync(path, 'r');
      const sections = new Map(readDirectory(fd, path).map((e) => [e.tag, e]));
      const previous = new PreviousIndex(path, meta, fd, sections);
      // Checked now: the string table seeds the build's only after the sweep (it would add to the sweep's peak).
      checkStringTable(previous.u32(Section.STRING_OFFSETS), sections.get(Section.STRING_BYTES)?.length ?? 0);
      return previous;
    } catch (e) {
      if (fd >= 0) closeSync(fd);
      log(`previous index ${path} not used, ids numbered afresh: ${(e as Error).message}`);
      return null;
    }
  }

  /** A whole section's words (for the small ones: strings, sub-tables); empty when the file has none. */
  u32(tag: string): Uint32Array {
    const e = this.sections.get(tag);
    if (!e) return new Uint32Array(0);
    const out = new Uint32Array(Math.ceil(e.length / 4));
    readFully(this.fd, new Uint8Array(out.buffer), e.length, e.offset);
    return out;
  }

  /** A whole section's bytes. */
  bytes(tag: string): Uint8Array {
    const e = this.sections.get(tag);
    if (!e) return new Uint8Array(0);
    const out = new Uint8Array(e.length);
    readFully(this.fd, out, e.length, e.offset);
    return out;
  }

  /** Rows (of `width` words) in a section. */
  rowCount(tag: string, width: number): number {
    return Math.floor((this.sections.get(tag)?.length ?? 0) / (4 * width));
  }

  /** Streams a section's rows in chunks: `each(words, firstRow, rows)`, the words valid only during the call. */
  forEachChunk(tag: string, width: number, each: (words: Uint32Array, firstRow: number, rows: number) => void): void {
    const e = this.sections.get(tag);
    if (!e) return;
    const total = this.rowCount(tag, width);
    const perChunk = Math.max(1, Math.floor(CHUNK_BYTES / (4 * width)));
    const buf = new Uint32Array(perChunk * width);
    for (let first = 0; first < total; first += perChunk) {
      const rows = Math.min(perChunk, total - first);
      readFully(this.fd, new Uint8Array(buf.buffer), rows * width * 4, e.offset + first * width * 4);
      each(buf, first, rows);
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Why the previous file's garbage is too much to carry on, or null. */
function garbageShare(meta: IndexMeta): string | null {
  const dead = meta.deadIds;
  if (!dead) return null;
  if (dead.records > MAX_DEAD_SHARE * meta.counts.records) return `${dead.records} of its ${meta.counts.records} records are dead`;
  if (dead.strings > MAX_DEAD_SHARE * meta.counts.strings) return `${dead.strings} of its ${meta.counts.strings} strings are dead`;
  if (dead.stringBytes > MAX_DEAD_SHARE * dead.stringTableBytes) return `${dead.stringBytes} of its ${dead.stringTableBytes} string bytes are dead`;
  if ((dead.v4BucketWords ?? 0) > MAX_DEAD_SHARE * (dead.v4BucketWordsTotal ?? 0)) return `${dead.v4BucketWords} of its ${dead.v4BucketWordsTotal} IPv4 bucket words are dead`;
  if (dead.subTableRows > MAX_DEAD_SHARE * dead.subTableRowsTotal) return `${dead.subTableRows} of its ${dead.subTableRowsTotal} sub-table rows are dead`;
  return null;
}
