/** Making a rename durable: fsync the folder that holds the renamed file. */
import { closeSync, fsyncSync, openSync } from 'node:fs';

/** fsyncs a directory; a filesystem that cannot (some network mounts) is tolerated. */
export function fsyncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Best effort: the rename itself is atomic either way.
  }
}
