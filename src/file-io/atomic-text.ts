/** Small files written whole or not at all, through the same temp + fsync + rename as atomic-file.ts. */
import { closeSync, fsyncSync, openSync, rmSync } from 'node:fs';
import { renameIntoPlace, tempPathFor, writeAt } from './atomic-file.ts';

/**
 * Writes `text` (or bytes) to `path` atomically (readers see the old file or
 * the new one, never a part), with file `mode`. Unlike AtomicFileWriter it
 * neither creates the folder nor stages 2 MiB blocks (these files are small),
 * and it creates its temp file exclusively ('wx'), removing it on any failure.
 */
export function writeTextAtomically(path: string, text: string | Uint8Array, mode = 0o644): void {
  const tmp = tempPathFor(path);
  try {
    const fd = openSync(tmp, 'wx', mode);
    try {
      writeAt(fd, typeof text === 'string' ? Buffer.from(text) : text, 0);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameIntoPlace(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}
