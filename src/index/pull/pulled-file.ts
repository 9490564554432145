/**
 * The pulled index file on disk: the manifest kept beside it (so a restarted
 * server checks the file it finds against what it verified) and the identity
 * that tells the file replaced or edited since.
 */
import { statSync } from 'node:fs';
import { writeTextAtomically } from '../../file-io/atomic-text.ts';
import type { PublishedManifest } from '../publish/signed-manifest.ts';

/** Inode, size and mtime of a verified file: a change in any means it was replaced or edited. */
export interface FileIdentity {
  ino: number;
  size: number;
  mtimeMs: number;
}

/** Where the manifest of the pulled file is kept, so a restarted server can check the file it finds against it. */
export function sidecarPath(localPath: string): string {
  return `${localPath}.pulled.json`;
}

/** Writes the served manifest beside the pulled file (atomically). */
export function writeSidecar(localPath: string, manifest: PublishedManifest): void {
  writeTextAtomically(sidecarPath(localPath), JSON.stringify(manifest));
}

/** What tells a file replaced or edited since it was verified; zeros when it cannot be read (which never matches). */
export function fileIdentity(path: string): FileIdentity {
  try {
    const s = statSync(path);
    return { ino: s.ino, size: s.size, mtimeMs: s.mtimeMs };
  } catch {
    return { ino: 0, size: -1, mtimeMs: 0 };
  }
}
