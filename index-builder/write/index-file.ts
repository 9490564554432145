/**
 * Serialises sections into one index file: header, section directory,
 * 8-byte aligned sections, an XXH3-64 per section and a CRC-32 over the header.
 * The layout is specified in index-builder/FORMAT.md.
 */
import { pack } from 'msgpackr';
import { DIR_ENTRY_SIZE, FORMAT_VERSION, HEADER_SIZE, MAGIC, SECTION_ALIGN, Section, type IndexMeta } from '../../src/index/format.ts';
import type { StringTable } from '../merge/value-table.ts';
import { removeStaleTempFiles, writeFileAtomic } from './atomic-file.ts';

/** A named section's bytes. */
export interface SectionData {
  tag: string;
  bytes: Uint8Array;
}

/** Encodes the string table as offsets (u32[n+1]) and UTF-8 bytes. */
export function encodeStrings(strings: StringTable): { offsets: Uint32Array; bytes: Uint8Array } {
  const list = strings.strings;
  const offsets = new Uint32Array(list.length + 1);
  let total = 0;
  for (let i = 0; i < list.length; i++) {
    offsets[i] = total;
    total += Buffer.byteLength(list[i], 'utf8');
  }
  offsets[list.length] = total;
  // One buffer filled in place: a buffer per string would be millions of small objects.
  const bytes = new Uint8Array(total);
  const enc = new TextEncoder();
  for (let i = 0; i < list.length; i++) enc.encodeInto(list[i], bytes.subarray(offsets[i], offsets[i + 1]));
  return { offsets, bytes };
}

/** Bytes of a typed array (no copy). */
export function bytesOf(a: Uint32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

const align = (n: number) => Math.ceil(n / SECTION_ALIGN) * SECTION_ALIGN;

/** Lays out header + directory + sections; returns the chunks to write and the total size. */
export function layoutIndexFile(meta: IndexMeta, sections: SectionData[], builtAtMs: number): { chunks: Uint8Array[]; size: number } {
  const all: SectionData[] = [{ tag: Section.META, bytes: pack(meta) as Uint8Array }, ...sections];
  const headerLen = align(HEADER_SIZE + all.length * DIR_ENTRY_SIZE);
  const header = new Uint8Array(headerLen);
  const hv = new DataView(header.buffer);
  header.set(new TextEncoder().encode(MAGIC), 0);
  hv.setUint32(8, FORMAT_VERSION, true);
  hv.setUint32(12, headerLen, true);
  hv.setBigUint64(16, BigInt(builtAtMs), true);
  hv.setUint32(24, all.length, true);

  const chunks: Uint8Array[] = [header];
  let offset = headerLen;
  all.forEach((s, i) => {
    if (s.tag.length !== 4) throw new Error(`section tag must be 4 characters: ${s.tag}`);
    const at = HEADER_SIZE + i * DIR_ENTRY_SIZE;
    for (let k = 0; k < 4; k++) header[at + k] = s.tag.charCodeAt(k);
    hv.setUint32(at + 4, 0, true);
    hv.setBigUint64(at + 8, BigInt(offset), true);
    hv.setBigUint64(at + 16, BigInt(s.bytes.length), true);
    // XXH3-64 verifies at memory speed: start-up stays flat in index size.
    hv.setBigUint64(at + 24, BigInt.asUintN(64, BigInt(Bun.hash.xxHash3(s.bytes))), true);
    chunks.push(s.bytes);
    const padded = align(s.bytes.length);
    if (padded > s.bytes.length) chunks.push(new Uint8Array(padded - s.bytes.length));
    offset += padded;
  });
  // The header checksum covers header + directory with its own field zeroed.
  hv.setUint32(28, Bun.hash.crc32(header) >>> 0, true);
  return { chunks, size: offset };
}

/**
 * Writes the index atomically (temp file, fsync, verify, rename): a reader
 * never sees a half-written file. Returns the size in bytes.
 */
export function writeIndexFile(
  path: string,
  meta: IndexMeta,
  sections: SectionData[],
  builtAtMs: number,
  verify?: (tempPath: string) => void,
): number {
  const { chunks, size } = layoutIndexFile(meta, sections, builtAtMs);
  // A build killed earlier leaves its temp file behind; nothing reads it, but it holds disk space.
  removeStaleTempFiles(path);
  writeFileAtomic(path, chunks, verify);
  return size;
}
