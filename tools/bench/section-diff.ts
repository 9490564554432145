/**
 * Which sections of two index files differ, and by how many bytes: per
 * section of the new file, its size, the old one's, and the bytes that differ
 * at the same position inside the section (a size change counts its
 * difference). What stays after stable ids (issue 37) is what shifts bytes.
 *
 *   bun tools/bench/section-diff.ts OLD.idx NEW.idx
 */
import { closeSync, openSync } from 'node:fs';
import { readDirectory, readFully, type DirectoryEntry } from '../../index-builder/write/verify-file.ts';
import { printTable } from './bench-kit.ts';

/** Per section of `newPath`: its length, the old one's, and the bytes that differ. */
export function sectionDiff(oldPath: string, newPath: string): { tag: string; oldBytes: number; newBytes: number; differing: number }[] {
  const a = openSync(oldPath, 'r');
  const b = openSync(newPath, 'r');
  try {
    const before = new Map(readDirectory(a, oldPath).map((e) => [e.tag, e]));
    const CHUNK = 8 << 20;
    const x = new Uint8Array(CHUNK);
    const y = new Uint8Array(CHUNK);
    return readDirectory(b, newPath).map((e: DirectoryEntry) => {
      const o = before.get(e.tag);
      const common = Math.min(o?.length ?? 0, e.length);
      let differing = Math.abs((o?.length ?? 0) - e.length);
      for (let at = 0; at < common; at += CHUNK) {
        const n = Math.min(CHUNK, common - at);
        readFully(a, x, n, o!.offset + at);
        readFully(b, y, n, e.offset + at);
        for (let i = 0; i < n; i++) if (x[i] !== y[i]) differing++;
      }
      return { tag: e.tag, oldBytes: o?.length ?? 0, newBytes: e.length, differing };
    });
  } finally {
    closeSync(a);
    closeSync(b);
  }
}

if (import.meta.main) {
  const [oldPath, newPath] = process.argv.slice(2);
  if (!oldPath || !newPath) throw new Error('usage: bun tools/bench/section-diff.ts OLD.idx NEW.idx');
  const rows = sectionDiff(oldPath, newPath);
  const total = rows.reduce((s, r) => s + r.newBytes, 0);
  const diff = rows.reduce((s, r) => s + r.differing, 0);
  printTable([
    ['section', 'old bytes', 'new bytes', 'differing bytes', '% of section'],
    ...rows.map((r) => [r.tag, r.oldBytes, r.newBytes, r.differing, ((100 * r.differing) / Math.max(1, r.newBytes)).toFixed(3)]),
    ['all', '', total, diff, ((100 * diff) / total).toFixed(3)],
  ]);
}
