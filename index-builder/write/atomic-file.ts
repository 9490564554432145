/** Atomic file writes: temp file in the same folder, fsync, rename. */
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';

/** A temp path beside `path` (same filesystem, so rename is atomic). */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${Date.now()}`);
}

/**
 * Writes chunks to a temp file, fsyncs it, runs `verify` on the temp file
 * (throwing keeps the old file), and renames it over `path`.
 */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array | Array<Uint8Array>,
  verify?: (tempPath: string) => void,
): void {
  mkdirSync(dirname(path) || '.', { recursive: true });
  const tmp = tempPathFor(path);
  const fd = openSync(tmp, 'w', 0o644);
  try {
    const chunks = Array.isArray(data) ? data : [typeof data === 'string' ? Buffer.from(data) : data];
    for (const chunk of chunks) {
      let off = 0;
      while (off < chunk.length) off += writeSync(fd, chunk, off, chunk.length - off);
    }
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {}
    throw e;
  }
  closeSync(fd);
  try {
    verify?.(tmp);
  } catch (e) {
    unlinkSync(tmp);
    throw e;
  }
  renameSync(tmp, path);
  // fsync the directory so the rename itself survives a crash.
  try {
    const dfd = openSync(dirname(path) || '.', 'r');
    fsyncSync(dfd);
    closeSync(dfd);
  } catch {}
}

/** Whether a process id is alive (signal 0 probes without signalling). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes temp files beside `path` left by writers that were killed (their
 * process is gone); a live writer's temp file is left alone. Returns the
 * names removed.
 */
export function removeStaleTempFiles(path: string): string[] {
  const dir = dirname(path) || '.';
  const prefix = `.${basename(path)}.tmp-`;
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || alive(pid)) continue;
    try {
      unlinkSync(join(dir, name));
      removed.push(name);
    } catch {}
  }
  return removed;
}
