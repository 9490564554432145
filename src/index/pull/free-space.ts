/** The free space a download checks before it starts, so a pull never fills the disk the server writes to. */
import { statfsSync } from 'node:fs';

/** Free space kept beyond a download's size (the sidecar, the status file, the filesystem's own needs). */
export const FREE_SPACE_MARGIN_BYTES = 64 * 1024 * 1024;

/** Bytes free to this process in `dir`'s filesystem, or null where statfs is not available (the write itself then fails cleanly when the disk is full). */
export function freeBytes(dir: string): number | null {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}
