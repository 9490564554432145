/**
 * Publishing an index for pulling servers: `DIR/versions/<name>.idx` (an
 * immutable copy), beside it `<name>.idx.zst` (compressed) and
 * `<name>.idx.from-<sha>.vcdiff` (a delta from each earlier kept version),
 * `DIR/ipintel.idx` (the newest, a hard link to it) and `DIR/ipintel.idx.json`
 * (its signed manifest, listing the transfers, written last), keeping the
 * newest `keep` versions; with a history, `DIR/history/` (publish-history.ts). Any static HTTP server can serve DIR.
 */
import { copyFileSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { writeTextAtomically } from '../../file-io/atomic-text.ts';
import { mapIndexFile } from '../map-index-file.ts';
import { sha256OfFile } from '../file-sha256.ts';
import { buildTimeRefusal } from './manifest-window.ts';
import { signManifest, type CompressedTransfer, type DeltaTransfer, type PublishedManifest } from './signed-manifest.ts';
import { compressIndexFile } from './index-compression.ts';
import { makeDelta, XDELTA3_MISSING, xdelta3Path } from './index-delta.ts';
import { verifyIndexFile, type ManifestRules } from './verify-index-file.ts';
import { fsyncPath } from '../../file-io/fsync-path.ts';
import { publishHistory, pruneExportedHistory, type PublisherHistory } from './publish-history.ts';

export { sha256OfFile };

/** Name of the newest index in a publish directory (the manifest is this plus `.json`). */
export const PUBLISHED_INDEX = 'ipintel.idx';
export const PUBLISHED_MANIFEST = `${PUBLISHED_INDEX}.json`;
const VERSIONS = 'versions';


export interface PublishOptions {
  /** The built, complete index file. */
  indexPath: string;
  dir: string;
  /** ed25519 private key (PEM text or KeyObject). */
  privateKey: string | KeyObject;
  /** Versions kept (the newest included); at least 1. */
  keep: number;
  /** The xdelta3 program (null: make no deltas); found on PATH when undefined. */
  xdelta3?: string | null;
  /** Where a transfer that could not be made is reported (the publish goes on without it). */
  log?: (line: string) => void;
  /** The publisher's history (IPINTEL_HISTORY): each published version is recorded and the history published beside it; absent: none. */
  history?: PublisherHistory;
  /** The clock of the moment a version is published from (tests); Date.now when absent. */
  now?: () => number;
}

/** Longest one delta may take to make (a publish then goes on without it). */
const DELTA_TIMEOUT_MS = 10 * 60_000;

/** Places a file at `to` atomically: `put` writes a temp name beside it, which is fsynced and renamed. */
async function placeAtomically(to: string, put: (tmp: string) => void | Promise<void>): Promise<void> {
  const tmp = join(dirname(to), `.${basename(to)}.tmp-${process.pid}-${Date.now()}`);
  try {
    await put(tmp);
    fsyncPath(tmp);
    renameSync(tmp, to);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** A version's file name: build time first, so names sort by age. */
function versionName(builtAt: string, sha256: string): string {
  return `ipintel-${builtAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${sha256.slice(0, 12)}.idx`;
}

/**
 * Publishes a verified index to `dir` and returns its manifest (the current one when these bytes are already
 * published). Refuses an index built before the one published (pullers would refuse it as a rollback) or in the
 * future; never prunes the version the manifest names; checks the folder as a puller would before returning.
 * The compressed copy and the deltas are made in streams and child processes (the event loop goes on); one that
 * cannot be made is logged and left out of the manifest.
 */
export async function publishIndex(options: PublishOptions): Promise<PublishedManifest> {
  const index = mapIndexFile(options.indexPath); // the index's own checks, before anything is published
  const sha256 = sha256OfFile(options.indexPath);
  const privateKey = typeof options.privateKey === 'string' ? createPrivateKey(options.privateKey) : options.privateKey;
  const rules: ManifestRules = { publicKey: createPublicKey(privateKey), now: Date.now(), maxAgeMs: Infinity };
  // What pullers find now; a damaged, foreign-signed, future-dated or dangling publish counts as none and is replaced.
  const current = verifiedPublish(options.dir, rules);
  // Publishing what is already published changes nothing (a publisher's restart, a rebuild to the same bytes).
  if (current?.sha256 === sha256) return options.history && !current.history ? addHistory(current, options, privateKey) : current;
  const builtAt = new Date(index.builtAtMs).toISOString();
  const refusal = buildTimeRefusal(builtAt, rules.now, Infinity);
  if (refusal) throw new Error(`${options.indexPath}: ${refusal} (is this host's clock right?)`);
  if (current && index.builtAtMs < Date.parse(current.built_at)) {
    throw new Error(`${options.indexPath} was built ${builtAt}, before the published ${current.built_at}: an older index is never published (pullers refuse it as a rollback)`);
  }
  const file = `${VERSIONS}/${versionName(builtAt, sha256)}`;
  const versions = join(options.dir, VERSIONS);
  mkdirSync(versions, { recursive: true });
  const versioned = join(options.dir, file);
  await placeAtomically(versioned, (tmp) => copyFileSync(options.indexPath, tmp));
  const log = options.log ?? ((line: string) => console.error(line));
  const compressed = await compressedTransfer(versioned, file, log);
  const deltas = await deltaTransfers(versions, basename(file), sha256, Math.max(1, options.keep), compressed?.size ?? index.sizeBytes, options.xdelta3, log);
  // Its moment in the history: the publish is committed to now; the manifest follows once the history is written.
  const history = options.history ? await publishHistory(options.history, versioned, (options.now ?? Date.now)(), options.dir, log) : null;
  const manifest = signManifest(
    {
      format_version: index.meta.formatVersion,
      sha256,
      size: index.sizeBytes,
      built_at: builtAt,
      file,
      sources: index.meta.sources.map((s) => ({ type: s.type, path: s.path, date: s.date ?? null })),
      ...(compressed ? { compressed } : {}),
      ...(deltas ? { deltas } : {}),
      ...(history ? { history } : {}),
    },
    privateKey,
  );
  writeTextAtomically(`${versioned}.json`, `${JSON.stringify(manifest, null, 2)}\n`);
  await placeAtomically(join(options.dir, PUBLISHED_INDEX), (tmp) => linkSync(versioned, tmp));
  fsyncPath(versions);
  // The manifest last: a puller that sees it finds every file it names.
  const manifestPath = writeManifest(options.dir, manifest);
  pruneVersions(versions, Math.max(1, options.keep), basename(manifest.file));
  if (options.history) pruneExportedHistory(options.dir, history);
  // The folder as a puller will find it: the manifest verifies and names a file that is there, whole.
  try {
    verifyIndexFile(versioned, readFileSync(manifestPath, 'utf8'), rules);
  } catch (e) {
    throw new Error(`the published folder ${options.dir} does not verify after publishing: ${(e as Error).message}`);
  }
  return manifest;
}

/** Writes the published manifest (`DIR/ipintel.idx.json`), its mtime always moved on; returns its path. */
function writeManifest(dir: string, manifest: PublishedManifest): string {
  const manifestPath = join(dir, PUBLISHED_MANIFEST);
  const previousMtime = mtimeSecondsOf(manifestPath);
  writeTextAtomically(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  // Static servers validate by mtime in whole seconds and size (nginx's ETag, Last-Modified): a manifest
  // replaced within the second by one of the same length would be answered 304. Its mtime always moves on.
  if (previousMtime !== null && mtimeSecondsOf(manifestPath)! <= previousMtime) utimesSync(manifestPath, previousMtime + 1, previousMtime + 1);
  fsyncPath(dir);
  return manifestPath;
}

/**
 * The version already published, signed again with the history (a folder
 * published before its publisher kept one: the version is recorded as
 * published from now). The manifest as it was when no history can be made.
 */
async function addHistory(current: PublishedManifest, options: PublishOptions, privateKey: KeyObject): Promise<PublishedManifest> {
  const log = options.log ?? ((line: string) => console.error(line));
  const history = await publishHistory(options.history!, join(options.dir, current.file), (options.now ?? Date.now)(), options.dir, log);
  if (!history) return current;
  const { signature: _s, signature_all_fields: _a, ...body } = current;
  const manifest = signManifest({ ...body, history }, privateKey);
  writeTextAtomically(join(options.dir, `${current.file}.json`), `${JSON.stringify(manifest, null, 2)}\n`);
  writeManifest(options.dir, manifest);
  pruneExportedHistory(options.dir, history);
  return manifest;
}

/** Writes `<version>.zst` and describes it; null (logged) when it cannot be made. */
async function compressedTransfer(versioned: string, file: string, log: (line: string) => void): Promise<CompressedTransfer | null> {
  const path = `${versioned}.zst`;
  try {
    await placeAtomically(path, (tmp) => compressIndexFile(versioned, tmp));
    return { file: `${file}.zst`, format: 'zstd', size: statSync(path).size, sha256: sha256OfFile(path) };
  } catch (e) {
    log(`publish: no compressed copy of ${file} (${(e as Error).message}); pullers download the plain file`);
    return null;
  }
}

/**
 * Writes a delta from each of the `keep` newest earlier versions in `versions` to `name` (sha256 `toSha256`) and
 * describes them; a delta that fails, or is no smaller than `worthBelow` bytes (the compressed copy), is left out.
 * Undefined when xdelta3 is not installed (logged).
 */
async function deltaTransfers(
  versions: string,
  name: string,
  toSha256: string,
  keep: number,
  worthBelow: number,
  xdelta3: string | null | undefined,
  log: (line: string) => void,
): Promise<DeltaTransfer[] | undefined> {
  const earlier = versionFiles(versions).filter((n) => n !== name).slice(-keep);
  if (earlier.length === 0) return [];
  const program = xdelta3 === undefined ? xdelta3Path() : xdelta3;
  if (program === null) {
    log(`publish: ${XDELTA3_MISSING}`);
    return undefined;
  }
  const deltas: DeltaTransfer[] = [];
  for (const from of earlier) {
    const fromSha256 = sha256OfFile(join(versions, from));
    if (fromSha256 === toSha256) continue;
    const deltaName = `${name}.from-${fromSha256.slice(0, 16)}.vcdiff`;
    const path = join(versions, deltaName);
    try {
      await placeAtomically(path, (tmp) => makeDelta(program, join(versions, from), join(versions, name), tmp, { maxOutputBytes: worthBelow, timeoutMs: DELTA_TIMEOUT_MS }));
      deltas.push({ file: `${VERSIONS}/${deltaName}`, format: 'vcdiff', from_sha256: fromSha256, to_sha256: toSha256, size: statSync(path).size, sha256: sha256OfFile(path) });
    } catch (e) {
      log(`publish: no delta from ${from} to ${name} (${(e as Error).message}); its pullers download the compressed file`);
    }
  }
  return deltas;
}

/** The version files in `versions`, oldest first (names begin with the build time). */
function versionFiles(versions: string): string[] {
  return readdirSync(versions)
    .filter((n) => n.startsWith('ipintel-') && n.endsWith('.idx'))
    .sort();
}

/** The manifest published in `dir` when it and the file it names pass verifyIndexFile with `rules`; else null. */
function verifiedPublish(dir: string, rules: ManifestRules): PublishedManifest | null {
  try {
    const text = readFileSync(join(dir, PUBLISHED_MANIFEST), 'utf8');
    const manifest = JSON.parse(text) as PublishedManifest;
    return verifyIndexFile(join(dir, String(manifest.file)), text, rules);
  } catch {
    return null;
  }
}

/** A file's mtime in whole seconds, or null when it does not exist. */
function mtimeSecondsOf(path: string): number | null {
  try {
    return Math.floor(statSync(path).mtimeMs / 1000);
  } catch {
    return null;
  }
}


/** Removes all but the newest `keep` versions (with their manifests, compressed copies and deltas); never `published`, the version the manifest names. */
function pruneVersions(versions: string, keep: number, published: string): void {
  const names = versionFiles(versions).filter((n) => n !== published);
  const pruned = names.slice(0, Math.max(0, names.length - (keep - 1)));
  if (pruned.length === 0) return;
  const all = readdirSync(versions);
  for (const name of pruned) {
    for (const f of all.filter((n) => n === name || n.startsWith(`${name}.`))) {
      try {
        unlinkSync(join(versions, f));
      } catch {}
    }
  }
}
