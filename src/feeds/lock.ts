/**
 * The refresh lock: a file beside the index that names the process fetching
 * and building. With several server processes on one host only its holder
 * refreshes; the others pick up the file it publishes. A lock whose process
 * is gone (a crash) or that is older than STALE_LOCK_MS is taken over.
 */
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { processAlive } from '../../index-builder/write/atomic-file.ts';

/** A refresh (downloads and a build) never legitimately holds the lock this long. */
export const STALE_LOCK_MS = 3 * 3_600_000;

/** A lock file still empty after this long was abandoned between its creation and its first write. */
const UNWRITTEN_LOCK_MS = 10_000;

/** Whether the lock at `path` is held by a live process within STALE_LOCK_MS. */
function heldByOther(path: string, now: number): boolean {
  try {
    const { pid, at } = JSON.parse(readFileSync(path, 'utf8')) as { pid: number; at: number };
    return pid !== process.pid && processAlive(pid) && now - at < STALE_LOCK_MS;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    // Empty or garbled: its creator may be writing it this instant; only an old one is abandoned.
    try {
      return now - statSync(path).mtimeMs < UNWRITTEN_LOCK_MS;
    } catch {
      return false;
    }
  }
}

/** Takes the lock (O_EXCL create); returns its release function, or null when another live process holds it. */
export function acquireLock(path: string, now = Date.now()): (() => void) | null {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o644);
      writeSync(fd, JSON.stringify({ pid: process.pid, at: now }));
      closeSync(fd);
      return () => {
        try {
          const { pid } = JSON.parse(readFileSync(path, 'utf8')) as { pid: number };
          if (pid === process.pid) unlinkSync(path);
        } catch {
          // Already gone (taken over as stale): nothing to release.
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (heldByOther(path, now)) return null;
      // A dead holder's lock: remove it and try once more (a racing taker wins the O_EXCL create).
      try {
        unlinkSync(path);
      } catch {
        // Someone else removed it first.
      }
    }
  }
  return null;
}
