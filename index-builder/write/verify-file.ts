/**
 * Checking a written index file's section checksums from the disk in
 * bounded memory: each section is read on its own into one reused buffer,
 * instead of mapping the whole file (whose pages would all count towards
 * the build's resident memory at its end).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { DIR_ENTRY_SIZE, HEADER_SIZE, SECTION_ALIGN } from '../../src/index/format.ts';

/** Reads exactly `length` bytes at `position` into `into` (throws on a short file). */
export function readFully(fd: number, into: Uint8Array, length: number, position: number): void {
  let off = 0;
  while (off < length) {
    const n = readSync(fd, into, off, length - off, position + off);
    if (n <= 0) throw new Error(`short read at byte ${position + off}`);
    off += n;
  }
}

/** One section as the file's directory lists it. */
export interface DirectoryEntry {
  tag: string;
  offset: number;
  /** The section's length rounded up to SECTION_ALIGN (its zero padding included). */
  padded: number;
  length: number;
  checksum: bigint;
}

/** The file's section directory, read from its header alone; throws on a header or section that does not fit the file. */
export function readDirectory(fd: number, path: string): DirectoryEntry[] {
  const size = fstatSync(fd).size;
  const fixed = new Uint8Array(HEADER_SIZE);
  readFully(fd, fixed, HEADER_SIZE, 0);
  const fv = new DataView(fixed.buffer);
  const headerLen = fv.getUint32(12, true);
  const count = fv.getUint32(24, true);
  if (count === 0 || count > 256 || headerLen < HEADER_SIZE + count * DIR_ENTRY_SIZE || headerLen > size) throw new Error(`${path}: corrupt header`);
  const header = new Uint8Array(headerLen);
  readFully(fd, header, headerLen, 0);
  const hv = new DataView(header.buffer);
  const entries: DirectoryEntry[] = [];
  for (let i = 0; i < count; i++) {
    const at = HEADER_SIZE + i * DIR_ENTRY_SIZE;
    const tag = String.fromCharCode(header[at], header[at + 1], header[at + 2], header[at + 3]);
    const offset = Number(hv.getBigUint64(at + 8, true));
    const length = Number(hv.getBigUint64(at + 16, true));
    const padded = Math.ceil(length / SECTION_ALIGN) * SECTION_ALIGN;
    if (offset + padded > size) throw new Error(`${path}: section ${tag} ends past the end of the file`);
    entries.push({ tag, offset, padded, length, checksum: hv.getBigUint64(at + 24, true) });
  }
  return entries;
}

/**
 * Verifies every section's XXH3-64 and zero padding against the file's own
 * directory; throws naming the section that differs. Memory: the largest
 * section once. The header itself (magic, checksum, layout) is the reader's
 * to check (IndexReader.open with verifyChecksums off).
 */
export function verifySectionChecksums(path: string): void {
  const fd = openSync(path, 'r');
  try {
    const entries = readDirectory(fd, path);
    const buf = new Uint8Array(Math.max(0, ...entries.map((e) => e.padded)));
    for (const e of entries) {
      readFully(fd, buf, e.padded, e.offset);
      if (BigInt.asUintN(64, BigInt(Bun.hash.xxHash3(buf.subarray(0, e.length)))) !== e.checksum) throw new Error(`${path}: checksum mismatch in section ${e.tag}`);
      for (let k = e.length; k < e.padded; k++) if (buf[k] !== 0) throw new Error(`${path}: non-zero padding after section ${e.tag}`);
    }
  } finally {
    closeSync(fd);
  }
}
