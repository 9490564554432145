/**
 * Rebuilding a retained version (store.ts): its recipe's runs read from the
 * packs' zstd frames, one frame decompressed at a time, into a file checked
 * whole against the catalog before it is given its name, or into a hash (a
 * fetched version checked against its signed sha256: history-adopt.ts).
 */
import { closeSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { zstdDecompressSync } from 'node:zlib';
import { untransformingEmitter } from './section-transforms.ts';
import { HistoryError, readPacked, recipeName, xxh3Of, type HistoryCatalog, type HistoryVersion, type Recipe } from './store.ts';

/** Bun's zstd: twice node:zlib's speed here, for packs this server wrote or has checked (a cold rebuild is on a request's path). */
const trustedDecompress = (stored: Uint8Array) => Bun.zstdDecompressSync(stored);

/** node:zlib's zstd, stopped at the frame's signed raw length: for fetched packs not yet checked, where a frame could be a zstd bomb. */
export const boundedDecompress = (stored: Uint8Array, rawLen: number) => zstdDecompressSync(stored, { maxOutputLength: rawLen });

/**
 * Hands `emit` the bytes of `recipe`'s runs in order (its transformed ranges
 * decoded: section-transforms.ts), reading each pack at
 * `locate(name)` (a pack's frames from `packs`). Reads only the frames the
 * runs need, one decompressed at a time (bounded memory), by `decompress`.
 * Throws HistoryError naming a missing or corrupt file.
 */
export function emitRecipe(
  recipe: Recipe,
  packs: HistoryCatalog['packs'],
  locate: (file: string) => string,
  emit: (bytes: Uint8Array) => void,
  decompress: (stored: Uint8Array, rawLen: number) => Uint8Array = trustedDecompress,
): void {
  const frameCache = new Map<string, Uint8Array>();
  const openPacks = new Map<string, { fd: number; path: string; starts: number[]; fileStarts: number[] }>();
  const packFile = (name: string) => {
    let p = openPacks.get(name);
    if (p) return p;
    const entry = packs[name];
    const path = locate(`${name}.pack`);
    if (!entry) throw new HistoryError(`history: pack ${name} is not in the catalog`);
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
      pfd = openSync(path, 'r');
    } catch (e) {
      throw new HistoryError(`history file ${path} is missing: ${(e as Error).message}`);
    }
    openPacks.set(name, (p = { fd: pfd, path, starts, fileStarts }));
    return p;
  };
  const frame = (name: string, k: number): Uint8Array => {
    const key = `${name}#${k}`;
    let raw = frameCache.get(key);
    if (raw) return raw;
    const p = packFile(name);
    const [rawLen, storedLen] = packs[name].frames[k];
    const stored = Buffer.alloc(storedLen);
    const n = readSync(p.fd, stored, 0, storedLen, p.fileStarts[k]);
    try {
      if (n !== storedLen) throw new Error(`short read (${n} of ${storedLen} bytes)`);
      raw = decompress(stored, rawLen);
      if (raw.length !== rawLen) throw new Error(`frame ${k} is ${raw.length} bytes, not ${rawLen}`);
    } catch (e) {
      throw new HistoryError(`history file ${p.path} is corrupt: ${(e as Error).message}`);
    }
    if (frameCache.size >= 4) frameCache.delete(frameCache.keys().next().value!);
    frameCache.set(key, raw);
    return raw;
  };
  const out = recipe.transforms?.length ? untransformingEmitter(recipe.transforms, emit) : { emit, finish: () => {} };
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
        if (take <= 0) throw new HistoryError(`history file ${p.path} is shorter than its recipe says`);
        out.emit(raw.subarray(from, from + take));
        at += take;
      }
    }
    try {
      out.finish();
    } catch (e) {
      throw new HistoryError(`history: a recipe's transformed ranges do not fit its runs: ${(e as Error).message}`);
    }
  } finally {
    for (const p of openPacks.values()) closeSync(p.fd);
  }
}

/**
 * Rebuilds `version` into `out` (temp name, renamed when its XXH3 is the
 * version's). Throws HistoryError naming a missing or corrupt file.
 */
export function rebuildVersion(dir: string, catalog: HistoryCatalog, version: HistoryVersion, out: string): void {
  const id = version.id;
  const recipe = readPacked<Recipe>(join(dir, recipeName(id)));
  const tmp = `${out}.tmp-${process.pid}-${Date.now()}`;
  const fd = openSync(tmp, 'w');
  try {
    emitRecipe(recipe, catalog.packs, (file) => join(dir, file), (bytes) => writeSync(fd, bytes));
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
  }
}
