/**
 * The retained history of served indexes (IPINTEL_HISTORY), in one folder:
 *
 * - `catalog.json`: every retained version (its sha256, build time, the
 *   moment it started being served) and every pack; written atomically
 *   last, so it is the commit point of a recording.
 * - `<pack>.pack`: chunks (chunks.ts) a version brought, as independent zstd
 *   frames of at most FRAME_BYTES raw bytes each (a version is rebuilt, rebuild.ts, by
 *   reading only the frames it needs, in bounded memory).
 * - `<id>.recipe`: how a version is put together, as runs of raw bytes of
 *   packs (contiguous chunks of one pack merge into one run, so an unchanged
 *   stretch of an index costs one run).
 * - `latest.chunks`: the newest version's chunk hashes and where each lives,
 *   what the next recording matches against.
 *
 * A version whose chunks are mostly new, or whose runs would draw on too
 * many packs or on packs much larger than itself, is written whole (a
 * keyframe): that bounds both the cost of rebuilding and what a pack kept
 * for a few live chunks wastes. Files no retained version needs are removed
 * by `pruneHistory`.
 */
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { pack as msgpack, unpack } from 'msgpackr';
import { writeTextAtomically } from '../../file-io/atomic-text.ts';
import { fsyncPath } from '../../file-io/fsync-path.ts';
import { parseIndexBytes } from '../map-index-file.ts';
import { chunkEnds, MAX_CHUNK } from './chunks.ts';
import { storedSegments, type SectionTransform } from './section-transforms.ts';

/** Raw bytes per zstd frame of a pack: what one read of a pack decompresses. */
export const FRAME_BYTES = 4 << 20;
/** A version drawing on more packs than this is written whole. */
const MAX_PACKS_PER_VERSION = 256;
/** A version whose packs hold more than this many times its own size is written whole. */
const MAX_PACK_OVERHEAD = 2;
/** A version with more than this share of new bytes is written whole. */
const KEYFRAME_NEW_SHARE = 0.5;
const ZSTD_LEVEL = 3;
const CATALOG = 'catalog.json';
export const LATEST_CHUNKS = 'latest.chunks';
export const CATALOG_FORMAT = 1;

/** Why the history could not be read or written (names the file). */
export class HistoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HistoryError';
  }
}

/** One retained version. */
export interface HistoryVersion {
  /** sha256 of the index file (hex). */
  id: string;
  /** Its build time (RFC 3339) and in ms. */
  builtAt: string;
  builtAtMs: number;
  /** When it started being served (ms); it was served until the next version's servedFromMs. */
  servedFromMs: number;
  sizeBytes: number;
  /** XXH3-64 of the whole file (hex): how a rebuilt copy is checked, cheaply. */
  xxh3: string;
}

/** One pack: its frames as [raw length, stored length]. */
export interface HistoryPack {
  frames: [number, number][];
}

/** The catalog: versions in the order they were served. */
export interface HistoryCatalog {
  format: number;
  versions: HistoryVersion[];
  packs: Record<string, HistoryPack>;
}

/** How a version is put together: runs [pack index, raw offset, length] of `packs`, then the ranges to untransform (section-transforms.ts; absent in recipes written before them). */
export interface Recipe {
  packs: string[];
  runs: [number, number, number][];
  transforms?: SectionTransform[];
}

/** Where the newest version's chunks live (latest.chunks). */
export interface LatestChunks {
  id: string;
  packs: string[];
  hashes: bigint[];
  lengths: number[];
  pack: number[];
  offsets: number[];
}

/** The catalog of `dir` (an empty one when there is none); throws HistoryError when it is unreadable or malformed. */
export function readCatalog(dir: string): HistoryCatalog {
  const path = join(dir, CATALOG);
  if (!existsSync(path)) return { format: CATALOG_FORMAT, versions: [], packs: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new HistoryError(`history catalog ${path} is unreadable: ${(e as Error).message}`);
  }
  const c = parsed as HistoryCatalog;
  const wellFormed =
    c !== null &&
    typeof c === 'object' &&
    c.format === CATALOG_FORMAT &&
    Array.isArray(c.versions) &&
    typeof c.packs === 'object' &&
    c.packs !== null &&
    c.versions.every((v) => typeof v?.id === 'string' && /^[0-9a-f]{64}$/.test(v.id) && Number.isFinite(v.servedFromMs) && Number.isFinite(v.builtAtMs) && typeof v.builtAt === 'string' && Number.isFinite(v.sizeBytes) && typeof v.xxh3 === 'string');
  if (!wellFormed) throw new HistoryError(`history catalog ${path} is malformed`);
  return c;
}

/** Writes the catalog atomically: the commit point of a recording or an adoption. */
export function writeCatalog(dir: string, catalog: HistoryCatalog): void {
  // writeTextAtomically fsyncs the folder after its rename.
  writeTextAtomically(join(dir, CATALOG), JSON.stringify(catalog));
}

/** The version being served at `ms` (the last one that started at or before it), or null before the first. */
export function versionAt(catalog: HistoryCatalog, ms: number): HistoryVersion | null {
  let found: HistoryVersion | null = null;
  for (const v of catalog.versions) {
    if (v.servedFromMs > ms) break;
    found = v;
  }
  return found;
}

/** Bytes the history folder holds (packs, recipes, catalog; not the rebuilt cache). */
export function historySizeBytes(dir: string): number {
  if (!existsSync(dir)) return 0;
  let total = 0;
  for (const name of readdirSync(dir)) {
    const s = statSync(join(dir, name), { throwIfNoEntry: false });
    if (s?.isFile()) total += s.size;
  }
  return total;
}

/** XXH3-64 of bytes, as hex. */
export function xxh3Of(data: Uint8Array): string {
  return BigInt.asUintN(64, BigInt(Bun.hash.xxHash3(data))).toString(16);
}

/** A version's recipe file name. */
export const recipeName = (id: string) => `${id.slice(0, 32)}.recipe`;

/** A zstd-compressed msgpack history file (recipe, chunk list); throws HistoryError naming it when missing or corrupt. */
export function readPacked<T>(path: string): T {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new HistoryError(`history file ${path} is missing: ${(e as Error).message}`);
  }
  try {
    return unpack(Bun.zstdDecompressSync(bytes)) as T;
  } catch (e) {
    throw new HistoryError(`history file ${path} is corrupt: ${(e as Error).message}`);
  }
}

/** Writes a zstd-compressed msgpack history file atomically. */
export function writePacked(path: string, value: unknown): void {
  writeTextAtomically(path, Bun.zstdCompressSync(msgpack(value), { level: 3 }));
}

/** Writes a pack file frame by frame (temp name, renamed when complete). */
class PackWriter {
  readonly frames: [number, number][] = [];
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private frame = new Uint8Array(FRAME_BYTES + MAX_CHUNK);
  private rawBytes = 0;
  private readonly fd: number;
  private readonly tmp: string;

  constructor(private readonly path: string) {
    this.tmp = `${path}.tmp-${process.pid}`;
    this.fd = openSync(this.tmp, 'w');
  }

  /** Appends raw bytes; returns their raw offset in the pack. */
  add(bytes: Uint8Array): number {
    const at = this.rawBytes;
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    this.rawBytes += bytes.length;
    if (this.pendingBytes >= FRAME_BYTES) this.flush();
    return at;
  }

  private flush(): void {
    if (this.pendingBytes === 0) return;
    // One frame buffer for the whole pack: a fresh one per frame is collected only now and then, and a keyframe's ~120 of them held the thread's heap at ~0.5 GiB.
    if (this.frame.length < this.pendingBytes) this.frame = new Uint8Array(this.pendingBytes);
    let at = 0;
    for (const bytes of this.pending) {
      this.frame.set(bytes, at);
      at += bytes.length;
    }
    const raw = this.frame.subarray(0, at);
    const stored = Bun.zstdCompressSync(raw, { level: ZSTD_LEVEL });
    writeSync(this.fd, stored);
    this.frames.push([raw.length, stored.length]);
    this.pending = [];
    this.pendingBytes = 0;
  }

  finish(): void {
    this.flush();
    closeSync(this.fd);
    fsyncPath(this.tmp);
    renameSync(this.tmp, this.path);
  }

  abort(): void {
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
    rmSync(this.tmp, { force: true });
  }
}

/** What recording one index did. */
export interface RecordResult {
  /** false: the newest version already is this index (a restart), or its recording was deferred; nothing was written. */
  recorded: boolean;
  /** true: a puller deferred this version (the `deferred` test passed to recordVersion). */
  deferred?: boolean;
  version: HistoryVersion;
  keyframe: boolean;
  /** Bytes written (pack, recipe, chunk list). */
  bytesWritten: number;
}

/**
 * Records the index file at `path` (verified first) as served from
 * `servedFromMs`. The newest version being the same file, or `deferred`
 * saying yes for its sha256, records nothing. Throws IndexFileError for a refused file, HistoryError for a history
 * that cannot be written.
 */
export function recordVersion(dir: string, path: string, servedFromMs: number, deferred?: (id: string) => boolean): RecordResult {
  mkdirSync(dir, { recursive: true });
  const data = Bun.mmap(path, { shared: false });
  const index = parseIndexBytes(path, data);
  const id = new Bun.CryptoHasher('sha256').update(data).digest('hex');
  const catalog = readCatalog(dir);
  const newest = catalog.versions.at(-1);
  const version: HistoryVersion = { id, builtAt: new Date(index.builtAtMs).toISOString(), builtAtMs: index.builtAtMs, servedFromMs, sizeBytes: data.length, xxh3: xxh3Of(data) };
  if (newest?.id === id) return { recorded: false, version: newest, keyframe: false, bytesWritten: 0 };
  if (deferred?.(id)) return { recorded: false, deferred: true, version, keyframe: false, bytesWritten: 0 };
  if (newest && servedFromMs < newest.servedFromMs) throw new HistoryError(`cannot record a version served from ${new Date(servedFromMs).toISOString()}, before the newest (${new Date(newest.servedFromMs).toISOString()})`);

  // The id and XXH3 above are the file's; what is chunked and stored is the file with its interval tables transformed (no chunk spans two segments).
  const { transforms, segments } = storedSegments(index, data);
  const ends = segments.flatMap((seg) => chunkEnds(seg.bytes).map((end) => seg.start + end));
  let seg = 0;
  /** Stored bytes [start, end) of one chunk; chunks are asked for in file order. */
  const stored = (start: number, end: number) => {
    if (start === 0) seg = 0;
    while (segments[seg].start + segments[seg].bytes.length <= start) seg++;
    return segments[seg].bytes.subarray(start - segments[seg].start, end - segments[seg].start);
  };
  const hashes = ends.map((end, i) => Bun.hash.xxHash3(stored(i === 0 ? 0 : ends[i - 1], end)) as bigint);
  const previous = newest ? latestChunksOf(dir, newest.id) : null;
  const known = new Map<bigint, number>();
  if (previous) previous.hashes.forEach((h, i) => known.set(h, i));
  // Pass 1: which chunks the previous version holds, and whether this version should be whole.
  const match = new Int32Array(ends.length).fill(-1);
  let newBytes = 0;
  const drawn = new Set<number>();
  for (let i = 0; i < ends.length; i++) {
    const len = ends[i] - (i === 0 ? 0 : ends[i - 1]);
    const j = known.get(hashes[i]);
    if (previous && j !== undefined && previous.lengths[j] === len) {
      match[i] = j;
      drawn.add(previous.pack[j]);
    } else newBytes += len;
  }
  const packRaw = (name: string) => (catalog.packs[name]?.frames ?? []).reduce((s, f) => s + f[0], 0);
  const drawnRaw = previous ? [...drawn].reduce((s, p) => s + packRaw(previous.packs[p]), 0) : 0;
  const keyframe = !previous || newBytes > data.length * KEYFRAME_NEW_SHARE || drawn.size + 1 > MAX_PACKS_PER_VERSION || drawnRaw + newBytes > data.length * MAX_PACK_OVERHEAD;

  // Pass 2: the new pack and the runs.
  const packName = freePackName(dir, catalog, id, servedFromMs);
  const writer = new PackWriter(join(dir, `${packName}.pack`));
  const recipe: Recipe = { packs: [], runs: [], ...(transforms.length > 0 ? { transforms } : {}) };
  const packIndex = new Map<string, number>();
  const indexOfPack = (name: string) => {
    let k = packIndex.get(name);
    if (k === undefined) packIndex.set(name, (k = recipe.packs.push(name) - 1));
    return k;
  };
  const latest: LatestChunks = { id, packs: recipe.packs, hashes, lengths: [], pack: [], offsets: [] };
  try {
    for (let i = 0; i < ends.length; i++) {
      const start = i === 0 ? 0 : ends[i - 1];
      const len = ends[i] - start;
      let p: number;
      let off: number;
      const j = match[i];
      if (!keyframe && j >= 0) {
        p = indexOfPack(previous!.packs[previous!.pack[j]]);
        off = previous!.offsets[j];
      } else {
        off = writer.add(stored(start, ends[i]));
        p = indexOfPack(packName);
      }
      latest.lengths.push(len);
      latest.pack.push(p);
      latest.offsets.push(off);
      const last = recipe.runs.at(-1);
      if (last && last[0] === p && last[1] + last[2] === off) last[2] += len;
      else recipe.runs.push([p, off, len]);
    }
    writer.finish();
  } catch (e) {
    writer.abort();
    throw new HistoryError(`history ${dir}: cannot write pack: ${(e as Error).message}`);
  }
  const recipePath = join(dir, recipeName(id));
  writePacked(recipePath, recipe);
  writePacked(join(dir, LATEST_CHUNKS), latest);
  if (recipe.packs.includes(packName)) catalog.packs[packName] = { frames: writer.frames };
  else rmSync(join(dir, `${packName}.pack`), { force: true }); // nothing new: only its recipe
  catalog.versions.push(version);
  writeCatalog(dir, catalog);
  const packBytes = writer.frames.reduce((s, f) => s + f[1], 0);
  return { recorded: true, version, keyframe, bytesWritten: packBytes + statSync(recipePath).size + statSync(join(dir, LATEST_CHUNKS)).size };
}

/**
 * A pack name `<id>-<n>` no pack of the catalog or file of the folder has:
 * n is the moment, or the next free number after it. The same version at
 * the same millisecond (recorded twice, or fetched from a publisher and
 * recorded here) would otherwise replace a pack other versions read.
 */
export function freePackName(dir: string, catalog: HistoryCatalog, id: string, ms: number): string {
  for (let n = ms; ; n++) {
    const name = `${id.slice(0, 32)}-${n}`;
    if (!catalog.packs[name] && !existsSync(join(dir, `${name}.pack`))) return name;
  }
}

/** The newest version's chunk list when it is the one named (else none: the next recording is whole). */
function latestChunksOf(dir: string, id: string): LatestChunks | null {
  const path = join(dir, LATEST_CHUNKS);
  if (!existsSync(path)) return null;
  try {
    const latest = readPacked<LatestChunks>(path);
    return latest.id === id ? latest : null;
  } catch {
    return null; // a damaged chunk list costs one keyframe, nothing else
  }
}

/** The first of versions served from `servedFromMs` (in order) whose service ended within `retentionMs` of `nowMs` (the newest always is). */
export function firstRetained(servedFromMs: readonly number[], nowMs: number, retentionMs: number): number {
  const cutoff = nowMs - retentionMs;
  let first = 0;
  while (first < servedFromMs.length - 1 && servedFromMs[first + 1] < cutoff) first++;
  return first;
}

/**
 * Drops the versions whose service ended more than `retentionMs` before
 * `nowMs` (the newest is always kept), then every file no retained version
 * needs. Returns how many versions were dropped.
 */
export function pruneHistory(dir: string, nowMs: number, retentionMs: number): number {
  if (!existsSync(dir)) return 0;
  const catalog = readCatalog(dir);
  const versions = catalog.versions;
  const first = firstRetained(versions.map((v) => v.servedFromMs), nowMs, retentionMs);
  const kept = versions.slice(first);
  const neededPacks = new Set<string>();
  const neededRecipes = new Set<string>();
  for (const v of kept) {
    const name = recipeName(v.id);
    if (neededRecipes.has(name)) continue;
    neededRecipes.add(name);
    for (const p of readPacked<Recipe>(join(dir, name)).packs) neededPacks.add(p);
  }
  if (first > 0) {
    catalog.versions = kept;
    catalog.packs = Object.fromEntries(Object.entries(catalog.packs).filter(([n]) => neededPacks.has(n)));
    writeCatalog(dir, catalog);
  }
  // Also sweeps what a recording cut short left behind (a pack or recipe the catalog never named).
  for (const name of readdirSync(dir)) {
    const stale = (name.endsWith('.pack') && !neededPacks.has(name.slice(0, -5))) || (name.endsWith('.recipe') && !neededRecipes.has(name)) || name.includes('.tmp-');
    if (stale) rmSync(join(dir, name), { force: true });
  }
  return first;
}
