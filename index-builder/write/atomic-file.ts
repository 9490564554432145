/** Atomic file writes: temp file in the same folder, fsync, rename. */
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';

/** A temp path beside `path` (same filesystem, so rename is atomic). */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${Date.now()}`);
}

/**
 * Size (and file-offset alignment) of every write but the last. Linux keeps
 * data written in aligned 2 MiB blocks as 2 MiB folios in its page cache,
 * and a process mapping the file (the server's Bun.mmap of the index) then
 * maps it with 2 MiB entries: random lookups miss the TLB far less. Written
 * in the index's many small sections, the file stays in small folios for as
 * long as it is cached (BENCHMARKS.md, sixth session).
 */
export const WRITE_BLOCK = 2 * 1024 * 1024;

/**
 * The bytes of `chunks`, in order, regrouped into blocks of `size` bytes (the
 * last may be shorter). A block is valid until the next one is asked for:
 * small chunks are copied into one reused buffer, and block-aligned runs of a
 * large chunk are handed out as views without copying.
 */
export function* blocksOf(chunks: Iterable<Uint8Array>, size: number = WRITE_BLOCK): Generator<Uint8Array> {
  const staging = new Uint8Array(size);
  let fill = 0;
  for (const chunk of chunks) {
    let off = 0;
    while (off < chunk.length) {
      if (fill === 0 && chunk.length - off >= size) {
        yield chunk.subarray(off, off + size);
        off += size;
        continue;
      }
      const n = Math.min(size - fill, chunk.length - off);
      staging.set(chunk.subarray(off, off + n), fill);
      fill += n;
      off += n;
      if (fill === size) {
        yield staging;
        fill = 0;
      }
    }
  }
  if (fill > 0) yield staging.subarray(0, fill);
}

/**
 * Writes chunks to a temp file (in WRITE_BLOCK blocks), fsyncs it, runs
 * `verify` on the temp file (throwing keeps the old file), and renames it
 * over `path`.
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
    for (const block of blocksOf(chunks)) {
      let off = 0;
      while (off < block.length) off += writeSync(fd, block, off, block.length - off);
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

/** Whether a process id is alive on this host (signal 0 probes without signalling). */
export function processAlive(pid: number): boolean {
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
    if (!Number.isInteger(pid) || pid <= 0 || processAlive(pid)) continue;
    try {
      unlinkSync(join(dir, name));
      removed.push(name);
    } catch {}
  }
  return removed;
}
