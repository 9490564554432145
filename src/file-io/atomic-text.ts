/** Small text files written whole or not at all: a temp name beside the file, fsync, rename. */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Writes `text` (or bytes) to `path` atomically (readers see the old file or the new one, never a part), with file `mode`. */
export function writeTextAtomically(path: string, text: string | Uint8Array, mode = 0o644): void {
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${Date.now()}`);
  try {
    const fd = openSync(tmp, 'wx', mode);
    try {
      if (typeof text === 'string') writeSync(fd, text);
      else writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}
