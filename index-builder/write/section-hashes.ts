/**
 * The XXH3-64 of every section of an index file, read from its directory
 * (the header only, not the sections): what two builds must agree on.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { DIR_ENTRY_SIZE, HEADER_SIZE } from '../../src/index/format.ts';

/** Section tag -> checksum (hex) and length, from the file's directory. */
export function sectionHashes(path: string): Record<string, { xxh3: string; bytes: number }> {
  const fd = openSync(path, 'r');
  try {
    const head = new Uint8Array(HEADER_SIZE);
    readSync(fd, head, 0, HEADER_SIZE, 0);
    const count = new DataView(head.buffer).getUint32(24, true);
    const dir = new Uint8Array(count * DIR_ENTRY_SIZE);
    readSync(fd, dir, 0, dir.length, HEADER_SIZE);
    const dv = new DataView(dir.buffer);
    const out: Record<string, { xxh3: string; bytes: number }> = {};
    for (let i = 0; i < count; i++) {
      const at = i * DIR_ENTRY_SIZE;
      const tag = String.fromCharCode(dir[at], dir[at + 1], dir[at + 2], dir[at + 3]);
      out[tag] = { xxh3: dv.getBigUint64(at + 24, true).toString(16).padStart(16, '0'), bytes: Number(dv.getBigUint64(at + 16, true)) };
    }
    return out;
  } finally {
    closeSync(fd);
  }
}
