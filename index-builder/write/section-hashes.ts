/**
 * The XXH3-64 of every section of an index file, read from its directory
 * (the header only, not the sections): what two builds must agree on.
 */
import { closeSync, openSync } from 'node:fs';
import { readDirectory } from './verify-file.ts';

/** Section tag -> checksum (hex) and length, from the file's directory. */
export function sectionHashes(path: string): Record<string, { xxh3: string; bytes: number }> {
  const fd = openSync(path, 'r');
  try {
    const out: Record<string, { xxh3: string; bytes: number }> = {};
    for (const e of readDirectory(fd, path)) out[e.tag] = { xxh3: e.checksum.toString(16).padStart(16, '0'), bytes: e.length };
    return out;
  } finally {
    closeSync(fd);
  }
}
