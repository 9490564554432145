/**
 * Adopting a publisher's history (on the history thread): the files a
 * puller fetched (src/index/pull/history-pull.ts) wait in a staging folder,
 * each already matching its signed size and sha256; here every version they
 * touch is rebuilt into a sha256 hasher (nothing written) and must hash to
 * the sha256 the signed manifest lists. Only then, under the folder's
 * recording lock, are the files moved in and the catalog replaced by the
 * publisher's timeline (its versions, served from the moment each was
 * published), followed by the puller's own recordings of versions newer than
 * the publisher's newest. A refusal changes nothing in the history folder.
 */
import { existsSync, linkSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { sha256OfFile } from '../file-sha256.ts';
import { join } from 'node:path';
import { unpack } from 'msgpackr';
import { zstdDecompressSync } from 'node:zlib';
import { writeTextAtomically } from '../../file-io/atomic-text.ts';
import { catalogVersionOf, HistoryRefusal, type HistoryManifest } from './history-manifest.ts';
import { boundedDecompress, emitRecipe } from './rebuild.ts';
import { transformsWellFormed } from './section-transforms.ts';
import { takeRecordingLock } from './recording-lock.ts';
import { CATALOG_FORMAT, freePackName, HistoryError, LATEST_CHUNKS, pruneHistory, readCatalog, readPacked, recipeName, writeCatalog, writePacked, type HistoryCatalog, type HistoryVersion, type LatestChunks, type Recipe } from './store.ts';

/** The publisher's history last adopted (what the puller holds of it), in the history folder. */
export const ADOPTED_MANIFEST = 'publisher-history.json';
/** Largest recipe accepted once decompressed (a 500 MB index's recipe is about 2 MB). */
const MAX_RECIPE_BYTES = 64 * 1024 * 1024;
/** How long an adoption waits for a recording in progress to finish. */
const LOCK_WAIT_MS = 60_000;

/** Adopt `manifest` (the versions the puller keeps, and their files) into `dir`; `fetched` are the files waiting in `staging`. */
export interface AdoptJob {
  op: 'adopt';
  dir: string;
  staging: string;
  manifest: HistoryManifest;
  fetched: string[];
  nowMs: number;
  retentionMs: number;
}

/** What an adoption did. */
export interface AdoptOutcome {
  versions: number;
  /** Versions rebuilt and checked against their signed sha256 (the others were checked when adopted before). */
  checked: number;
}

/** Checks the fetched history, then commits it; throws HistoryRefusal (or HistoryError) with the history folder untouched. */
export function adoptHistoryJob(job: AdoptJob): AdoptOutcome {
  const fetched = new Set(job.fetched);
  const locate = (name: string) => (fetched.has(name) ? join(job.staging, name) : join(job.dir, name));
  const packs: HistoryCatalog['packs'] = {};
  for (const [name, f] of Object.entries(job.manifest.files)) if (f.frames) packs[name.slice(0, -5)] = { frames: f.frames };
  let checked = 0;
  for (const v of job.manifest.versions) {
    if (!fetched.has(v.recipe) && !v.packs.some((p) => fetched.has(`${p}.pack`))) continue;
    checkRebuilt(v.sha256, v.size, fetchedRecipe(locate(v.recipe), v.packs), packs, locate);
    checked++;
  }
  const release = takeRecordingLock(job.dir, LOCK_WAIT_MS);
  if (!release) throw new HistoryError(`history ${job.dir} is being recorded by another process; the publisher's history is adopted at a later poll`);
  try {
    setOwnPacksAside(job.dir, job.manifest, job.fetched);
    // Packs before recipes: a recipe moved in finds its packs there.
    const order = [...fetched].sort((a, b) => Number(a.endsWith('.recipe')) - Number(b.endsWith('.recipe')));
    for (const name of order) renameSync(join(job.staging, name), join(job.dir, name));
    writeCatalog(job.dir, timeline(job.dir, job.manifest, packs));
    writeTextAtomically(join(job.dir, ADOPTED_MANIFEST), JSON.stringify(job.manifest));
    pruneHistory(job.dir, job.nowMs, job.retentionMs);
  } finally {
    release();
  }
  return { versions: job.manifest.versions.length, checked };
}

/**
 * A fetched pack whose name a pack of this folder's catalog has with other
 * bytes (this server recorded the same version at the same millisecond the
 * publisher published it) would replace bytes other versions read: that pack
 * is linked to a free name, the catalog lists both, then every recipe and the
 * chunk list point at the new name (a crash midway leaves both names readable).
 */
function setOwnPacksAside(dir: string, manifest: HistoryManifest, fetched: string[]): void {
  let catalog: HistoryCatalog;
  try {
    catalog = readCatalog(dir);
  } catch {
    return; // an unreadable catalog is replaced whole
  }
  const renamed = new Map<string, string>();
  for (const file of fetched) {
    const pack = file.slice(0, -'.pack'.length);
    const path = join(dir, file);
    if (!file.endsWith('.pack') || !catalog.packs[pack] || !existsSync(path) || sha256OfFile(path) === manifest.files[file]?.sha256) continue;
    const aside = freePackName(dir, catalog, pack.slice(0, 32), Number(pack.slice(33)));
    linkSync(path, join(dir, `${aside}.pack`));
    catalog.packs[aside] = catalog.packs[pack];
    renamed.set(pack, aside);
  }
  if (renamed.size === 0) return;
  writeCatalog(dir, catalog);
  const repoint = (packs: string[]) => packs.map((p) => renamed.get(p) ?? p);
  for (const name of new Set(catalog.versions.map((v) => recipeName(v.id)))) {
    const path = join(dir, name);
    let recipe: Recipe;
    try {
      recipe = readPacked<Recipe>(path);
    } catch {
      continue; // a missing recipe: that version is dropped by the timeline
    }
    if (recipe.packs.some((p) => renamed.has(p))) writePacked(path, { ...recipe, packs: repoint(recipe.packs) });
  }
  const latestPath = join(dir, LATEST_CHUNKS);
  try {
    const latest = readPacked<LatestChunks>(latestPath);
    if (latest.packs.some((p) => renamed.has(p))) writePacked(latestPath, { ...latest, packs: repoint(latest.packs) });
  } catch {
    rmSync(latestPath, { force: true }); // none, or damaged: the next recording is whole
  }
}

/** A fetched recipe, decompressed within MAX_RECIPE_BYTES and checked: it draws on the packs the signed list names, its runs well formed. */
function fetchedRecipe(path: string, signedPacks: string[]): Recipe {
  let recipe: Recipe;
  try {
    recipe = unpack(zstdDecompressSync(readFileSync(path), { maxOutputLength: MAX_RECIPE_BYTES })) as Recipe;
  } catch (e) {
    throw new HistoryRefusal(`history recipe ${path} does not read: ${(e as Error).message}`);
  }
  const runsOk =
    recipe !== null &&
    typeof recipe === 'object' &&
    Array.isArray(recipe.runs) &&
    recipe.runs.every((r) => Array.isArray(r) && r.length === 3 && Number.isSafeInteger(r[0]) && r[0] >= 0 && r[0] < signedPacks.length && Number.isSafeInteger(r[1]) && r[1] >= 0 && Number.isSafeInteger(r[2]) && r[2] > 0);
  const packsOk = Array.isArray(recipe?.packs) && recipe.packs.length === signedPacks.length && recipe.packs.every((p, i) => p === signedPacks[i]);
  if (recipe?.transforms !== undefined && !transformsWellFormed(recipe.transforms)) throw new HistoryRefusal(`history recipe ${path} lists malformed transformed ranges`);
  if (!runsOk || !packsOk) throw new HistoryRefusal(`history recipe ${path} is malformed or draws on packs its signed list does not name`);
  return recipe;
}

/** Rebuilds a recipe into a sha256 hasher (never past `size` bytes); refuses bytes other than the signed ones. */
function checkRebuilt(sha256: string, size: number, recipe: Recipe, packs: HistoryCatalog['packs'], locate: (name: string) => string): void {
  const hasher = new Bun.CryptoHasher('sha256');
  let total = 0;
  const tooLong = new HistoryRefusal(`history version ${sha256.slice(0, 16)} rebuilds past its signed ${size} bytes`);
  emitRecipe(recipe, packs, locate, (bytes) => {
    total += bytes.length;
    if (total > size) throw tooLong;
    hasher.update(bytes);
  }, boundedDecompress);
  if (total !== size || hasher.digest('hex') !== sha256) {
    throw new HistoryRefusal(`history version ${sha256.slice(0, 16)} rebuilt from the fetched files is not the index the signed manifest lists (${total === size ? 'its sha256 differs' : `${total} bytes, not ${size}`})`);
  }
}

/**
 * The catalog after adoption: the publisher's versions, then the puller's
 * own recordings served after the publisher's newest and not among its
 * versions (a pull whose history has not arrived yet). The chunk list of a
 * version the publisher's files now hold is dropped: the next recording is whole.
 */
function timeline(dir: string, manifest: HistoryManifest, packs: HistoryCatalog['packs']): HistoryCatalog {
  let own: HistoryCatalog = { format: CATALOG_FORMAT, versions: [], packs: {} };
  try {
    own = readCatalog(dir);
  } catch {
    // an unreadable catalog is replaced whole
  }
  const published = new Set(manifest.versions.map((v) => v.sha256));
  const newest = Date.parse(manifest.versions.at(-1)?.published_from ?? '');
  const all: HistoryCatalog['packs'] = { ...packs };
  const tail: HistoryVersion[] = own.versions.filter((v) => {
    if (v.servedFromMs <= newest || published.has(v.id)) return false;
    try {
      for (const p of readPacked<Recipe>(join(dir, recipeName(v.id))).packs) if (own.packs[p]) all[p] ??= own.packs[p];
      return true;
    } catch {
      return false; // an own recording whose recipe is gone is not kept
    }
  });
  if (tail.length === 0 && existsSync(join(dir, LATEST_CHUNKS))) rmSync(join(dir, LATEST_CHUNKS), { force: true });
  return { format: CATALOG_FORMAT, versions: [...manifest.versions.map(catalogVersionOf), ...tail], packs: all };
}
