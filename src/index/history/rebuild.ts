/**
 * Rebuilding a retained version (store.ts) into a file: its recipe's runs
 * read from the packs' zstd frames, one frame decompressed at a time, the
 * result checked whole against the catalog before it is given its name.
 */
import { closeSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { HistoryError, readPacked, recipeName, xxh3Of, type HistoryCatalog, type HistoryVersion, type Recipe } from './store.ts';

/**
 * Rebuilds `version` into `out` (temp name, renamed when its XXH3 is the
 * version's). Reads only the frames its runs need, one frame decompressed
 * at a time (bounded memory). Throws HistoryError naming a missing or corrupt file.
 */
export function rebuildVersion(dir: string, catalog: HistoryCatalog, version: HistoryVersion, out: string): void {
  const id = version.id;
  const recipe = readPacked<Recipe>(join(dir, recipeName(id)));
  const tmp = `${out}.tmp-${process.pid}-${Date.now()}`;
  const fd = openSync(tmp, 'w');
  const frameCache = new Map<string, Uint8Array>();
  const openPacks = new Map<string, { fd: number; starts: number[]; fileStarts: number[] }>();
  const packFile = (name: string) => {
    let p = openPacks.get(name);
    if (p) return p;
    const entry = catalog.packs[name];
    if (!entry) throw new HistoryError(`history ${dir}: pack ${name} is not in the catalog`);
    const starts: number[] = [];
    const fileStarts: number[] = [];
    let raw = 0;
    let stored = 0;
    for (const [r, s] of entry.frames) {
      starts.push(raw);
      fileStarts.push(stored);
      raw += r;
      stored += s;
    }
    let pfd: number;
    try {
      pfd = openSync(join(dir, `${name}.pack`), 'r');
    } catch (e) {
      throw new HistoryError(`history file ${join(dir, `${name}.pack`)} is missing: ${(e as Error).message}`);
    }
    openPacks.set(name, (p = { fd: pfd, starts, fileStarts }));
    return p;
  };
  const frame = (name: string, k: number): Uint8Array => {
    const key = `${name}#${k}`;
    let raw = frameCache.get(key);
    if (raw) return raw;
    const p = packFile(name);
    const [rawLen, storedLen] = catalog.packs[name].frames[k];
    const stored = Buffer.alloc(storedLen);
    const n = readSync(p.fd, stored, 0, storedLen, p.fileStarts[k]);
    try {
      if (n !== storedLen) throw new Error(`short read (${n} of ${storedLen} bytes)`);
      raw = Bun.zstdDecompressSync(stored);
      if (raw.length !== rawLen) throw new Error(`frame ${k} is ${raw.length} bytes, not ${rawLen}`);
    } catch (e) {
      throw new HistoryError(`history file ${join(dir, `${name}.pack`)} is corrupt: ${(e as Error).message}`);
    }
    if (frameCache.size >= 4) frameCache.delete(frameCache.keys().next().value!);
    frameCache.set(key, raw);
    return raw;
  };
  try {
    for (const [pi, offset, length] of recipe.runs) {
      const name = recipe.packs[pi];
      const p = packFile(name);
      let at = offset;
      const end = offset + length;
      while (at < end) {
        // The frame holding `at`: the last whose start is at or before it.
        let k = p.starts.length - 1;
        while (k > 0 && p.starts[k] > at) k--;
        const raw = frame(name, k);
        const from = at - p.starts[k];
        const take = Math.min(end - at, raw.length - from);
        if (take <= 0) throw new HistoryError(`history file ${join(dir, `${name}.pack`)} is shorter than its recipe says`);
        const slice = raw.subarray(from, from + take);
        writeSync(fd, slice);
        at += take;
      }
    }
    closeSync(fd);
    const rebuilt = statSync(tmp).size === version.sizeBytes ? xxh3Of(Bun.mmap(tmp, { shared: false })) : 'a different size';
    if (rebuilt !== version.xxh3) throw new HistoryError(`history ${dir}: version ${id.slice(0, 16)} rebuilt as ${rebuilt}, not ${version.xxh3}: a history file is corrupt`);
    renameSync(tmp, out);
  } catch (e) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
    rmSync(tmp, { force: true });
    throw e;
  } finally {
    for (const p of openPacks.values()) closeSync(p.fd);
  }
}
