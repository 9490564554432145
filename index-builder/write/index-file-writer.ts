/**
 * Serialises sections into one index file: header, section directory,
 * 64-byte aligned sections, an XXH3-64 per section and a CRC-32 over the header.
 * The layout is specified in index-builder/FORMAT.md.
 */
import { pack } from 'msgpackr';
import { DIR_ENTRY_SIZE, FORMAT_VERSION, HEADER_SIZE, MAGIC, SECTION_ALIGN, Section, type IndexMeta } from '../../src/index/format.ts';
import { AtomicFileWriter, removeStaleTempFiles } from '../../src/file-io/atomic-file.ts';

/** Bytes of a typed array (no copy). */
export function bytesOf(a: Uint32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

const align = (n: number) => Math.ceil(n / SECTION_ALIGN) * SECTION_ALIGN;

/**
 * An index file written section by section as the build produces them, so
 * no more than one encoded section need be in memory: header and directory
 * go out last (over the first block, held back), META is the last section
 * (its counts are known only at the end). Atomic: temp file, fsync, verify,
 * rename.
 */
export class IndexFileWriter {
  private readonly out: AtomicFileWriter;
  private readonly headerLen: number;
  private readonly entries: { tag: string; offset: number; length: number; xxh3: bigint }[] = [];
  private offset: number;

  /** `sectionCount`: how many sections the file will hold, META included (the directory's size). */
  constructor(
    path: string,
    private readonly sectionCount: number,
  ) {
    // A build killed earlier leaves its temp file behind; nothing reads it, but it holds disk space.
    removeStaleTempFiles(path);
    this.headerLen = align(HEADER_SIZE + sectionCount * DIR_ENTRY_SIZE);
    this.out = new AtomicFileWriter(path, true);
    this.out.write(new Uint8Array(this.headerLen));
    this.offset = this.headerLen;
  }

  /** Appends a section (its bytes are written before this returns). */
  add(tag: string, bytes: Uint8Array): void {
    if (tag.length !== 4) throw new Error(`section tag must be 4 characters: ${tag}`);
    if (this.entries.length >= this.sectionCount) throw new Error(`more sections than the ${this.sectionCount} announced`);
    // XXH3-64 verifies at memory speed: start-up stays flat in index size.
    this.entries.push({ tag, offset: this.offset, length: bytes.length, xxh3: BigInt.asUintN(64, BigInt(Bun.hash.xxHash3(bytes))) });
    this.out.write(bytes);
    const padded = align(bytes.length);
    if (padded > bytes.length) this.out.write(new Uint8Array(padded - bytes.length));
    this.offset += padded;
  }

  /** Appends META, writes the header, and verifies and renames the file into place. Returns its size in bytes. */
  finish(meta: IndexMeta, builtAtMs: number, verify?: (tempPath: string) => void): number {
    this.add(Section.META, pack(meta) as Uint8Array);
    if (this.entries.length !== this.sectionCount) {
      this.out.abort();
      throw new Error(`${this.entries.length} sections written, ${this.sectionCount} announced`);
    }
    const header = new Uint8Array(this.headerLen);
    const hv = new DataView(header.buffer);
    header.set(new TextEncoder().encode(MAGIC), 0);
    hv.setUint32(8, FORMAT_VERSION, true);
    hv.setUint32(12, this.headerLen, true);
    hv.setBigUint64(16, BigInt(builtAtMs), true);
    hv.setUint32(24, this.entries.length, true);
    this.entries.forEach((s, i) => {
      const at = HEADER_SIZE + i * DIR_ENTRY_SIZE;
      for (let k = 0; k < 4; k++) header[at + k] = s.tag.charCodeAt(k);
      hv.setUint32(at + 4, 0, true);
      hv.setBigUint64(at + 8, BigInt(s.offset), true);
      hv.setBigUint64(at + 16, BigInt(s.length), true);
      hv.setBigUint64(at + 24, s.xxh3, true);
    });
    // The header checksum covers header + directory with its own field zeroed.
    hv.setUint32(28, Bun.hash.crc32(header) >>> 0, true);
    this.out.finish(header, verify);
    return this.offset;
  }

  /** Removes the temp file (the build failed before finish). */
  abort(): void {
    this.out.abort();
  }
}
