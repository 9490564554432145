/**
 * Mapping an index file and verifying it before any lookup: magic, format
 * version, header checksum, section bounds and alignment, zero padding and
 * every section's XXH3-64. A bad file is refused with a message saying why.
 */
import { statSync } from 'node:fs';
import { unpack } from 'msgpackr';
import { mapFileReadOnly } from './map-read-only.ts';
import { DIR_ENTRY_SIZE, FORMAT_VERSION, HEADER_SIZE, MAGIC, SECTION_ALIGN, Section, type IndexMeta } from './format.ts';

/** Why an index file was refused. */
export class IndexFileError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`index ${path}: ${reason}`);
    this.name = 'IndexFileError';
  }
}

export interface SectionView {
  tag: string;
  offset: number;
  length: number;
  bytes: Uint8Array;
}

/** A mapped, verified index file. */
export interface MappedIndex {
  path: string;
  data: Uint8Array;
  sizeBytes: number;
  builtAtMs: number;
  meta: IndexMeta;
  sections: Map<string, SectionView>;
}

/** Options for opening: checksum verification can be skipped only by tools that know why. */
export interface OpenOptions {
  verifyChecksums?: boolean;
}

/** Errors of Bun.mmap's read-write open that a read-only mapping can get past. */
const READ_ONLY_CODES = new Set(['EROFS', 'EACCES', 'EPERM']);

/** Maps (Bun.mmap, or read-only where the file cannot be opened for writing) and verifies an index file; throws IndexFileError when it is unusable. */
export function mapIndexFile(path: string, options: OpenOptions = {}): MappedIndex {
  let data: Uint8Array;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new Error('not a regular file');
    data = stat.size === 0 ? new Uint8Array(0) : mapFile(path, stat.size);
  } catch (e) {
    throw new IndexFileError(path, `cannot open: ${(e as Error).message}`);
  }
  return parseIndexBytes(path, data, options);
}

/** Bun.mmap (private, copy-on-write) where it can open the file; a read-only mapping on a read-only volume or a file owned by another user. */
function mapFile(path: string, size: number): Uint8Array {
  try {
    return Bun.mmap(path, { shared: false });
  } catch (e) {
    if (!READ_ONLY_CODES.has((e as NodeJS.ErrnoException).code ?? '')) throw e;
    return mapFileReadOnly(path, size);
  }
}

/** Verifies and indexes the sections of index bytes (mapped or in memory). */
export function parseIndexBytes(path: string, data: Uint8Array, options: OpenOptions = {}): MappedIndex {
  const fail = (reason: string): never => {
    throw new IndexFileError(path, reason);
  };
  if (data.length < HEADER_SIZE) fail(`truncated: ${data.length} bytes is smaller than the ${HEADER_SIZE}-byte header`);
  const magic = new TextDecoder().decode(data.subarray(0, 8));
  if (magic !== MAGIC) fail(`wrong magic ${JSON.stringify(magic)}: not an ipintel index file`);
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const version = dv.getUint32(8, true);
  if (version !== FORMAT_VERSION) fail(`unsupported format version ${version} (this server reads version ${FORMAT_VERSION}); rebuild the index`);
  const headerLen = dv.getUint32(12, true);
  const count = dv.getUint32(24, true);
  if (count === 0 || count > 256 || headerLen < HEADER_SIZE + count * DIR_ENTRY_SIZE || headerLen > data.length) {
    fail(`truncated or corrupt header (header length ${headerLen}, ${count} sections, file ${data.length} bytes)`);
  }
  // A copy, whatever `data` is: a Node Buffer's slice() is a view, and zeroing the checksum field in it would write into the caller's bytes.
  const header = new Uint8Array(data.subarray(0, headerLen));
  new DataView(header.buffer).setUint32(28, 0, true);
  if ((Bun.hash.crc32(header) >>> 0) !== dv.getUint32(28, true)) fail('header checksum mismatch: the file is corrupt');

  const verify = options.verifyChecksums !== false;
  const sections = new Map<string, SectionView>();
  let expected = headerLen;
  for (let i = 0; i < count; i++) {
    const at = HEADER_SIZE + i * DIR_ENTRY_SIZE;
    const tag = String.fromCharCode(data[at], data[at + 1], data[at + 2], data[at + 3]);
    const offset = Number(dv.getBigUint64(at + 8, true));
    const length = Number(dv.getBigUint64(at + 16, true));
    const checksum = dv.getBigUint64(at + 24, true);
    if (offset % SECTION_ALIGN !== 0 || offset !== expected) fail(`section ${tag} is misplaced (offset ${offset}, expected ${expected})`);
    const end = offset + length;
    const paddedEnd = Math.ceil(end / SECTION_ALIGN) * SECTION_ALIGN;
    if (paddedEnd > data.length) fail(`truncated: section ${tag} ends at byte ${paddedEnd} but the file has ${data.length} bytes`);
    const bytes = data.subarray(offset, end);
    if (verify) {
      if (BigInt.asUintN(64, BigInt(Bun.hash.xxHash3(bytes))) !== checksum) fail(`checksum mismatch in section ${tag}: the file is corrupt`);
      for (let k = end; k < paddedEnd; k++) if (data[k] !== 0) fail(`non-zero padding after section ${tag}: the file is corrupt`);
    }
    sections.set(tag, { tag, offset, length, bytes });
    expected = paddedEnd;
  }
  if (expected !== data.length) fail(`unexpected ${data.length - expected} trailing bytes after the last section`);
  const metaSection = sections.get(Section.META) ?? fail('missing META section');
  let meta: IndexMeta;
  try {
    // A copy: msgpackr keeps a view of the last buffer it decoded in a module variable, and a view of the mapping would keep the whole file mapped until the next index is opened.
    meta = unpack(metaSection.bytes.slice()) as IndexMeta;
  } catch (e) {
    fail(`META section does not decode: ${(e as Error).message}`);
  }
  return {
    path,
    data,
    sizeBytes: data.length,
    builtAtMs: Number(dv.getBigUint64(16, true)),
    meta: meta!,
    sections,
  };
}

/** A section as u32 values (sections are 8-byte aligned, so no copy is needed). */
export function u32Section(index: MappedIndex, tag: string): Uint32Array {
  const s = index.sections.get(tag);
  if (!s) throw new IndexFileError(index.path, `missing section ${tag}`);
  if (s.length % 4 !== 0) throw new IndexFileError(index.path, `section ${tag} length ${s.length} is not a multiple of 4`);
  return new Uint32Array(s.bytes.buffer, s.bytes.byteOffset, s.length / 4);
}
