/**
 * The lock every writer of a history folder's catalog takes (a recording,
 * an adoption of a publisher's history): one at a time per folder, across
 * threads and processes.
 */
import { closeSync, openSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** A lock older than this was left by a process that died holding it. */
const LOCK_LAPSE_MS = 10 * 60_000;

/** Takes the folder's lock (O_EXCL; a lapsed lock is taken over), waiting up to `waitMs`; returns a release, or null when another writer holds it still. */
export function takeRecordingLock(dir: string, waitMs = 0): (() => void) | null {
  const lock = join(dir, '.recording.lock');
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'));
      return () => rmSync(lock, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? 0);
      if (age >= LOCK_LAPSE_MS) {
        rmSync(lock, { force: true });
        continue;
      }
      if (Date.now() >= until) return null;
      // On the history thread: sleeping blocks no request.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
}
