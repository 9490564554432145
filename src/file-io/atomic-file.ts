/** Atomic file writes: temp file in the same folder, fsync, rename. */
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import { fsyncPath } from './fsync-path.ts';

/** A temp path beside `path` (same filesystem, so rename is atomic). */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${Date.now()}`);
}

/**
 * Renames a written and fsynced temp file over `path`, then fsyncs the folder
 * so the rename itself survives a crash (tolerated where a filesystem cannot).
 */
export function renameIntoPlace(tmp: string, path: string): void {
  renameSync(tmp, path);
  fsyncPath(dirname(path) || '.');
}

/**
 * Size (and file-offset alignment) of every write but the last. Linux keeps
 * data written in aligned 2 MiB blocks as 2 MiB folios in its page cache,
 * and a process mapping the file (the server's Bun.mmap of the index) then
 * maps it with 2 MiB entries: random lookups miss the TLB far less. Written
 * in the index's many small sections, the file stays in small folios for as
 * long as it is cached (BENCHMARKS.md, "Measured changes in the code").
 */
export const WRITE_BLOCK = 2 * 1024 * 1024;

/**
 * Bytes regrouped into blocks of `size` bytes (the last, at end(), may be
 * shorter), handed to `onBlock` with their index. A block is valid only
 * during the call: small chunks are copied into one reused buffer, and
 * block-aligned runs of a large chunk are handed out as views without copying.
 */
export class BlockStream {
  private readonly staging: Uint8Array;
  private fill = 0;
  private blocks = 0;

  constructor(
    private readonly onBlock: (bytes: Uint8Array, index: number) => void,
    private readonly size: number = WRITE_BLOCK,
  ) {
    this.staging = new Uint8Array(size);
  }

  /** Appends bytes. */
  write(chunk: Uint8Array): void {
    const size = this.size;
    let off = 0;
    while (off < chunk.length) {
      if (this.fill === 0 && chunk.length - off >= size) {
        this.onBlock(chunk.subarray(off, off + size), this.blocks++);
        off += size;
        continue;
      }
      const n = Math.min(size - this.fill, chunk.length - off);
      this.staging.set(chunk.subarray(off, off + n), this.fill);
      this.fill += n;
      off += n;
      if (this.fill === size) {
        this.onBlock(this.staging, this.blocks++);
        this.fill = 0;
      }
    }
  }

  /** Hands out the last, partial block (if any). */
  end(): void {
    if (this.fill > 0) this.onBlock(this.staging.subarray(0, this.fill), this.blocks++);
    this.fill = 0;
  }
}

/** Writes all of `bytes` at a file position. */
export function writeAt(fd: number, bytes: Uint8Array, position: number): void {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off, position + off);
}

/**
 * A file written as a stream into a temp file beside `path`, in aligned
 * WRITE_BLOCK blocks, then fsynced, verified and renamed over `path`. With
 * `holdFirstBlock`, the first block stays in memory until finish, so a header
 * that is only known at the end (sizes, checksums) goes out with it in one
 * aligned write.
 */
export class AtomicFileWriter {
  readonly tmp: string;
  /** Bytes written so far. */
  size = 0;
  private readonly fd: number;
  private readonly blocks: BlockStream;
  private first: Uint8Array | null = null;

  constructor(
    readonly path: string,
    private readonly holdFirstBlock = false,
  ) {
    mkdirSync(dirname(path) || '.', { recursive: true });
    this.tmp = tempPathFor(path);
    this.fd = openSync(this.tmp, 'w', 0o644);
    this.blocks = new BlockStream((bytes, index) => {
      if (this.holdFirstBlock && index === 0) this.first = bytes.slice();
      else writeAt(this.fd, bytes, index * WRITE_BLOCK);
    });
  }

  /** Appends bytes (copied or written before this returns: the caller may reuse them). */
  write(chunk: Uint8Array): void {
    try {
      this.blocks.write(chunk);
      this.size += chunk.length;
    } catch (e) {
      this.abort();
      throw e;
    }
  }

  /**
   * Writes the rest, with `head` over the file's first bytes (it must fit the
   * first block, which holdFirstBlock kept back), fsyncs, runs `verify` on the
   * temp file (throwing keeps the old file) and renames it over `path`.
   */
  finish(head?: Uint8Array, verify?: (tempPath: string) => void): void {
    try {
      if (head && (!this.holdFirstBlock || head.length > WRITE_BLOCK || head.length > this.size)) throw new Error('a head needs holdFirstBlock and must fit the first block');
      this.blocks.end();
      if (this.first) {
        if (head) this.first.set(head, 0);
        writeAt(this.fd, this.first, 0);
      }
      fsyncSync(this.fd);
    } catch (e) {
      this.abort();
      throw e;
    }
    closeSync(this.fd);
    try {
      verify?.(this.tmp);
    } catch (e) {
      unlinkSync(this.tmp);
      throw e;
    }
    renameIntoPlace(this.tmp, this.path);
  }

  /** Closes and removes the temp file (after a failure). */
  abort(): void {
    try {
      closeSync(this.fd);
    } catch {}
    try {
      unlinkSync(this.tmp);
    } catch {}
  }
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
  const out = new AtomicFileWriter(path);
  const chunks = Array.isArray(data) ? data : [typeof data === 'string' ? Buffer.from(data) : data];
  for (const chunk of chunks) out.write(chunk);
  out.finish(undefined, verify);
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
