/**
 * What a refresh child killed mid-write leaves behind (at its memory cap,
 * its time budget, or the server stopping): the builder's temp index (as
 * large as the index), the state file's temp and its download temps. The
 * parent removes them once the child is gone, so a full disk is not made
 * fuller by every failed round.
 */
import { readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { removeStaleTempFiles } from '../file-io/atomic-file.ts';

/** Removes the temp files of the (exited) child `pid`: beside `files` (atomic writes) and in `folders` (downloads); returns how many. */
export function removeChildLeftovers(pid: number, files: string[], folders: string[]): number {
  let removed = 0;
  for (const f of files) removed += removeStaleTempFiles(f).length;
  const prefix = `.download-${pid}-`;
  for (const dir of new Set(folders)) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!name.startsWith(prefix)) continue;
      try {
        unlinkSync(join(dir, name));
        removed++;
      } catch {}
    }
  }
  return removed;
}

