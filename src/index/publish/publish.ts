/**
 * Publishing an index for pulling servers: `DIR/versions/<name>.idx` (an
 * immutable copy), `DIR/ipintel.idx` (the newest, a hard link to it) and
 * `DIR/ipintel.idx.json` (its signed manifest, written last), keeping the
 * newest `keep` versions. Any static HTTP server can serve DIR.
 */
import { closeSync, copyFileSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { writeTextAtomically } from '../atomic-text.ts';
import { mapIndexFile } from '../index-file.ts';
import { signManifest, verifyManifest, type PublishedManifest } from './signed-manifest.ts';
import { fsyncPath } from '../fsync-path.ts';

/** Name of the newest index in a publish directory (the manifest is this plus `.json`). */
export const PUBLISHED_INDEX = 'ipintel.idx';
export const PUBLISHED_MANIFEST = `${PUBLISHED_INDEX}.json`;
const VERSIONS = 'versions';

/** Versions kept when IPINTEL_PUBLISH_KEEP is unset. */
const DEFAULT_PUBLISH_KEEP = 3;

/** IPINTEL_PUBLISH_KEEP: a whole number 1..1000; unset or blank: DEFAULT_PUBLISH_KEEP. Throws otherwise. */
export function parsePublishKeep(text: string | undefined): number {
  const t = text?.trim() ?? '';
  if (t === '') return DEFAULT_PUBLISH_KEEP;
  const keep = Number(t);
  if (!/^[0-9]+$/.test(t) || keep < 1 || keep > 1000) throw new Error(`IPINTEL_PUBLISH_KEEP must be a whole number 1..1000 (got "${text}")`);
  return keep;
}

export interface PublishOptions {
  /** The built, complete index file. */
  indexPath: string;
  dir: string;
  /** ed25519 private key (PEM text or KeyObject). */
  privateKey: string | KeyObject;
  /** Versions kept (the newest included); at least 1. */
  keep: number;
}

/** sha256 of a file, read in blocks (an index is hundreds of MB). */
export function sha256OfFile(path: string): string {
  const hasher = new Bun.CryptoHasher('sha256');
  const fd = openSync(path, 'r');
  try {
    const block = Buffer.allocUnsafe(4 * 1024 * 1024);
    for (;;) {
      const n = readSync(fd, block, 0, block.length, null);
      if (n === 0) break;
      hasher.update(block.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hasher.digest('hex');
}

/** Places a file at `to` atomically: `put` writes a temp name beside it, which is fsynced and renamed. */
function placeAtomically(to: string, put: (tmp: string) => void): void {
  const tmp = join(dirname(to), `.${basename(to)}.tmp-${process.pid}-${Date.now()}`);
  try {
    put(tmp);
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

/** Publishes a verified index to `dir` and returns its manifest (the current one when these bytes are already published); older versions past `keep` are removed. */
export function publishIndex(options: PublishOptions): PublishedManifest {
  const index = mapIndexFile(options.indexPath); // the index's own checks, before anything is published
  const sha256 = sha256OfFile(options.indexPath);
  // Publishing what is already published changes nothing (a publisher's restart, a rebuild to the same bytes).
  const current = readPublishedManifest(options.dir);
  if (current?.sha256 === sha256 && existsSync(join(options.dir, current.file)) && signedBy(current, options.privateKey)) return current;
  const manifest = signManifest(
    {
      format_version: index.meta.formatVersion,
      sha256,
      size: index.sizeBytes,
      built_at: new Date(index.builtAtMs).toISOString(),
      file: `${VERSIONS}/${versionName(new Date(index.builtAtMs).toISOString(), sha256)}`,
      sources: index.meta.sources.map((s) => ({ type: s.type, path: s.path, date: s.date ?? null })),
    },
    options.privateKey,
  );
  const versions = join(options.dir, VERSIONS);
  mkdirSync(versions, { recursive: true });
  const versioned = join(options.dir, manifest.file);
  const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
  placeAtomically(versioned, (tmp) => copyFileSync(options.indexPath, tmp));
  writeTextAtomically(`${versioned}.json`, manifestText);
  placeAtomically(join(options.dir, PUBLISHED_INDEX), (tmp) => linkSync(versioned, tmp));
  fsyncPath(versions);
  // The manifest last: a puller that sees it finds every file it names.
  const manifestPath = join(options.dir, PUBLISHED_MANIFEST);
  const previousMtime = mtimeSecondsOf(manifestPath);
  writeTextAtomically(manifestPath, manifestText);
  // Static servers validate by mtime in whole seconds and size (nginx's ETag, Last-Modified): a manifest
  // replaced within the second by one of the same length would be answered 304. Its mtime always moves on.
  if (previousMtime !== null && mtimeSecondsOf(manifestPath)! <= previousMtime) utimesSync(manifestPath, previousMtime + 1, previousMtime + 1);
  fsyncPath(options.dir);
  pruneVersions(versions, Math.max(1, options.keep));
  return manifest;
}

/** Whether a published manifest verifies with the public half of `privateKey` (a damaged one is published again). */
function signedBy(manifest: PublishedManifest, privateKey: string | KeyObject): boolean {
  try {
    const publicKey = createPublicKey(typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey);
    verifyManifest(JSON.stringify(manifest), publicKey);
    return true;
  } catch {
    return false;
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


/** Removes all but the newest `keep` versions (and their manifests). */
function pruneVersions(versions: string, keep: number): void {
  const names = readdirSync(versions)
    .filter((n) => n.startsWith('ipintel-') && n.endsWith('.idx'))
    .sort();
  for (const name of names.slice(0, Math.max(0, names.length - keep))) {
    for (const f of [name, `${name}.json`]) {
      try {
        unlinkSync(join(versions, f));
      } catch {}
    }
  }
}

/** The manifest currently published in `dir`, or null. */
function readPublishedManifest(dir: string): PublishedManifest | null {
  try {
    return JSON.parse(readFileSync(join(dir, PUBLISHED_MANIFEST), 'utf8')) as PublishedManifest;
  } catch {
    return null;
  }
}
