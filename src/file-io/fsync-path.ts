/** Making a write or a rename durable: fsync the file, or the folder that holds the renamed file. */
import { closeSync, fsyncSync, openSync } from 'node:fs';

/** fsyncs a file or a directory; a filesystem that cannot (some network mounts) is tolerated. */
export function fsyncPath(path: string): void {
  try {
    const fd = openSync(path, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Best effort: the rename itself is atomic either way.
  }
}
