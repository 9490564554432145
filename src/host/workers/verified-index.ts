/**
 * The index verified once per host start, not once per worker: the primary
 * maps and checks every section's checksum while the workers load their code,
 * and names the file it verified by its identity (device, inode, size,
 * modification time). A worker that finds the same file at the path maps it
 * without hashing it again; any other file (replaced, rewritten, or the
 * primary could not verify it) it verifies itself, as before. A worker may
 * also map the file before the primary's verdict (mapEarlyIndex), to prepare
 * its app meanwhile; at the verdict it keeps that mapping only when it is of
 * the very file the primary verified, else opens the path again verified.
 */
import { statSync } from 'node:fs';
import { IndexHolder } from '../../index/holder.ts';
import { mapIndexFile } from '../../index/map-index-file.ts';
import { IndexReader } from '../../index/reader.ts';

/** A file the primary verified, as the path named it then. */
export interface VerifiedIndex {
  path: string;
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
}

/** The identity of the file at `path` now (null when it cannot be read). */
function identityOf(path: string): VerifiedIndex | null {
  try {
    const s = statSync(path, { bigint: true });
    return { path, dev: s.dev, ino: s.ino, size: s.size, mtimeNs: s.mtimeNs };
  } catch {
    return null;
  }
}

function same(a: VerifiedIndex | null, b: VerifiedIndex | null): boolean {
  return a !== null && b !== null && a.path === b.path && a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs;
}

/**
 * Verifies the index at `path` in this thread and returns its identity; null
 * when it does not verify or changed meanwhile (each worker then verifies,
 * and refuses, on its own, with the message it always gave). The mapping
 * goes with the caller's next full collection (releaseVerifyMappings): not
 * here, where a full collection of the primary's heap would delay the start.
 */
export function verifyForWorkers(path: string): VerifiedIndex | null {
  const before = identityOf(path);
  if (before === null) return null;
  try {
    mapIndexFile(path);
  } catch {
    return null;
  }
  return same(before, identityOf(path)) ? before : null;
}

/**
 * Opens the index at `path` for serving: without hashing its sections again
 * when it is the file `verified` names, unchanged from before the mapping
 * to after it; otherwise verified here.
 */
export function openVerifiedIndex(path: string, verified: VerifiedIndex | null): IndexHolder {
  const before = identityOf(path);
  if (verified !== null && same(verified, before)) {
    const reader = IndexReader.open(path, { verifyChecksums: false });
    if (same(verified, identityOf(path))) return new IndexHolder(reader, path);
  }
  return IndexHolder.open(path);
}

/** An index mapped before the primary's verdict, its sections not hashed: nothing is answered from it before settleEarlyIndex. */
export interface EarlyIndex {
  holder: IndexHolder;
  /** The file mapped, unchanged from before the mapping to after it. */
  file: VerifiedIndex;
}

/**
 * Maps and parses the index at `path` without hashing its sections (a worker,
 * while the primary checks the file); null when it cannot be parsed or
 * changed meanwhile (the worker then opens it after the verdict).
 */
export function mapEarlyIndex(path: string): EarlyIndex | null {
  const before = identityOf(path);
  if (before === null) return null;
  try {
    const holder = new IndexHolder(IndexReader.open(path, { verifyChecksums: false }), path);
    return same(before, identityOf(path)) ? { holder, file: before } : null;
  } catch {
    return null;
  }
}

/**
 * At the primary's verdict: keeps the early mapping when it is of the very
 * file the primary verified; otherwise (another file mapped, or the primary
 * refused it) the holder reloads the path, hashing every section here, as
 * generation `generation`. Throws IndexFileError when that file is refused;
 * returns whether the holder reloaded.
 */
export function settleEarlyIndex(early: EarlyIndex, verified: VerifiedIndex | null, generation: number): boolean {
  if (verified !== null && same(verified, early.file)) return false;
  early.holder.reload(early.file.path, generation);
  return true;
}

/**
 * Drops the mappings verifyForWorkers left for the collector, a second from
 * now (once the workers serve): Bun unmaps a mapping when it is collected,
 * and without a full collection the primary, which allocates little, would
 * keep the whole file mapped.
 */
export function releaseVerifyMappings(): void {
  setTimeout(() => Bun.gc(true), 1000).unref();
}
