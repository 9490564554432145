/**
 * The history a publisher publishes beside its index (`history/` of the
 * published folder): a JSON file listing every retained version (sha256,
 * build time, the moment it was published, size, XXH3, its recipe and the
 * packs it draws on) and every file (name, size, sha256, and a pack's zstd
 * frames). The signed manifest names this file by size and sha256
 * (`history`, under `signature_all_fields`), so every figure here is as
 * trusted as the index, and every figure a puller acts on is bounded here.
 */
import { MAX_CHUNK } from './chunks.ts';
import { FRAME_BYTES, recipeName, type HistoryCatalog, type HistoryVersion } from './store.ts';

/** Largest history manifest a puller reads (a version costs about 300 bytes: some 50 000 versions). */
export const MAX_HISTORY_MANIFEST_BYTES = 16 * 1024 * 1024;
/** Versions a history manifest may list. */
const MAX_VERSIONS = 50_000;
/**
 * 2: recipes may list transformed ranges (section-transforms.ts), which a
 * puller of format 1 would rebuild untransformed and refuse by their sha256;
 * it refuses format 2 at once, saying so, and keeps its index and history.
 */
const HISTORY_FORMAT = 2;
/** Formats this puller reads: 1 (an older publisher: no transformed ranges) and 2. */
const READABLE_FORMATS = new Set([1, HISTORY_FORMAT]);

/** One published version. */
export interface PublishedVersion {
  sha256: string;
  built_at: string;
  /** When the publisher published it (RFC 3339, ms): it was published until the next version's. */
  published_from: string;
  size: number;
  /** XXH3-64 of the index (hex): what a rebuild is checked against cheaply (the sha256 is checked when it is fetched). */
  xxh3: string;
  /** Its recipe's file name and the packs its runs read, in the recipe's order. */
  recipe: string;
  packs: string[];
}

/** One published file (a recipe or a pack). */
export interface PublishedHistoryFile {
  size: number;
  sha256: string;
  /** A pack's frames as [raw length, stored length] (store.ts). */
  frames?: [number, number][];
}

/** The history manifest. */
export interface HistoryManifest {
  format: number;
  versions: PublishedVersion[];
  /** By file name (`<pack>.pack`, `<id>.recipe`). */
  files: Record<string, PublishedHistoryFile>;
}

/** The history manifest of a publisher's catalog; `fileFacts` gives each file's size and sha256. */
export function historyManifestOf(catalog: HistoryCatalog, packsOf: (v: HistoryVersion) => string[], fileFacts: (name: string) => { size: number; sha256: string }): HistoryManifest {
  const files: Record<string, PublishedHistoryFile> = {};
  const versions = catalog.versions.map((v) => {
    const recipe = recipeName(v.id);
    const packs = packsOf(v);
    files[recipe] ??= fileFacts(recipe);
    for (const p of packs) files[`${p}.pack`] ??= { ...fileFacts(`${p}.pack`), frames: catalog.packs[p].frames };
    return { sha256: v.id, built_at: v.builtAt, published_from: new Date(v.servedFromMs).toISOString(), size: v.sizeBytes, xxh3: v.xxh3, recipe, packs };
  });
  return { format: HISTORY_FORMAT, versions, files };
}

/** Why a publisher's history was refused. */
export class HistoryRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HistoryRefusal';
  }
}

const HEX64 = /^[0-9a-f]{64}$/;
const PACK = /^[0-9a-f]{32}-\d{1,16}$/;
const isCount = (n: unknown, min: number) => Number.isSafeInteger(n) && (n as number) >= min;
const isTime = (t: unknown) => typeof t === 'string' && t.length <= 40 && Number.isFinite(Date.parse(t));

/**
 * Parses and checks a history manifest: shapes, versions in publishing
 * order and none published after `nowMs`, each version's recipe its own, its
 * packs listed, a pack's frames each at most MAX_FRAME_RAW raw and adding up
 * to its size. Throws HistoryRefusal naming the first fault.
 */
export function parseHistoryManifest(text: string, nowMs: number): HistoryManifest {
  let doc: HistoryManifest;
  try {
    doc = JSON.parse(text) as HistoryManifest;
  } catch {
    throw new HistoryRefusal('the history manifest is not JSON');
  }
  if (doc === null || typeof doc !== 'object' || !READABLE_FORMATS.has(doc.format)) throw new HistoryRefusal(`the history manifest is not format 1 or ${HISTORY_FORMAT}`);
  if (!Array.isArray(doc.versions) || doc.versions.length === 0 || doc.versions.length > MAX_VERSIONS || doc.files === null || typeof doc.files !== 'object') throw new HistoryRefusal('the history manifest has no versions or files list');
  for (const [name, f] of Object.entries(doc.files)) {
    const pack = name.endsWith('.pack') && PACK.test(name.slice(0, -5));
    const recipe = /^[0-9a-f]{32}\.recipe$/.test(name);
    if (!(pack || recipe) || f === null || typeof f !== 'object' || !isCount(f.size, 1) || typeof f.sha256 !== 'string' || !HEX64.test(f.sha256)) throw new HistoryRefusal(`history file ${name.slice(0, 80)} is malformed`);
    if (pack && !framesFit(f.frames, f.size)) throw new HistoryRefusal(`history pack ${name} has malformed frames`);
  }
  let last = -Infinity;
  for (const v of doc.versions) {
    const ok =
      v !== null &&
      typeof v === 'object' &&
      typeof v.sha256 === 'string' &&
      HEX64.test(v.sha256) &&
      isTime(v.built_at) &&
      isTime(v.published_from) &&
      isCount(v.size, 1) &&
      typeof v.xxh3 === 'string' &&
      /^[0-9a-f]{1,16}$/.test(v.xxh3) &&
      v.recipe === recipeName(v.sha256) &&
      doc.files[v.recipe] !== undefined &&
      Array.isArray(v.packs) &&
      v.packs.length > 0 &&
      v.packs.every((p) => typeof p === 'string' && doc.files[`${p}.pack`]?.frames !== undefined);
    if (!ok) throw new HistoryRefusal(`history version ${String(v?.sha256).slice(0, 16)} is malformed`);
    const from = Date.parse(v.published_from);
    if (from <= last) throw new HistoryRefusal(`history version ${v.sha256.slice(0, 16)} is out of publishing order`);
    if (from > nowMs) throw new HistoryRefusal(`history version ${v.sha256.slice(0, 16)} is published in the future (${v.published_from})`);
    last = from;
  }
  return doc;
}

/** A frame's raw bytes at most: a pack writer closes a frame once it holds FRAME_BYTES, so its last chunk may pass them. */
const MAX_FRAME_RAW = FRAME_BYTES + MAX_CHUNK;

/** Whether frames are [raw, stored] pairs, raw at most MAX_FRAME_RAW, stored adding up to `size`. */
function framesFit(frames: unknown, size: number): boolean {
  if (!Array.isArray(frames) || frames.length === 0) return false;
  let stored = 0;
  for (const f of frames) {
    if (!Array.isArray(f) || f.length !== 2 || !isCount(f[0], 1) || f[0] > MAX_FRAME_RAW || !isCount(f[1], 1)) return false;
    stored += f[1];
  }
  return stored === size;
}

/** A published version as a catalog entry. */
export function catalogVersionOf(v: PublishedVersion): HistoryVersion {
  const builtAtMs = Date.parse(v.built_at);
  return { id: v.sha256, builtAt: new Date(builtAtMs).toISOString(), builtAtMs, servedFromMs: Date.parse(v.published_from), sizeBytes: v.size, xxh3: v.xxh3 };
}
