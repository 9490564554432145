/** Placing a file's bytes under a second name without a second copy on disk. */
import { copyFileSync, linkSync } from 'node:fs';

/** A hard link (the same bytes, whatever later happens to either name); a copy across filesystems. */
export function linkOrCopy(path: string, link: string): void {
  try {
    linkSync(path, link);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
    copyFileSync(path, link);
  }
}
