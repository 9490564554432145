/**
 * A publisher's history beside its index: each version it publishes is
 * recorded into its own history (IPINTEL_HISTORY_DIR) with the moment of
 * its publish as the moment it was served from, then the packs and recipes
 * of every retained version are hard-linked into `DIR/history/` with a
 * history manifest (history-manifest.ts) the signed manifest names by size
 * and sha256. Files the new manifest no longer names are removed only after
 * it is in place, so a puller of the previous manifest finds its files.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeTextAtomically } from '../../file-io/atomic-text.ts';
import { linkOrCopy } from '../link-or-copy.ts';
import { sha256OfFile } from '../file-sha256.ts';
import { historyManifestOf, type HistoryManifest } from '../history/history-manifest.ts';
import { readCatalog, readPacked, recipeName, type Recipe } from '../history/store.ts';
import type { HistoryTransfer } from './signed-manifest.ts';

/** The published folder's history subfolder. */
export const PUBLISHED_HISTORY = 'history';

/** Where a publisher keeps its history and how a published version is recorded into it. */
export interface PublisherHistory {
  dir: string;
  /** Records the index at `path` as published from `publishedFromMs` (on the history thread); resolves once recorded or refused. */
  record(path: string, publishedFromMs: number): Promise<unknown>;
}

/**
 * Records the version just copied to `versioned` and publishes the history
 * into `publishDir/history/`; returns the signed manifest's `history` field,
 * or null (logged) when no history can be published. A failed recording is
 * logged and the history as it stands is published.
 */
export async function publishHistory(history: PublisherHistory, versioned: string, publishedFromMs: number, publishDir: string, log: (line: string) => void): Promise<HistoryTransfer | null> {
  try {
    await history.record(versioned, publishedFromMs);
  } catch (e) {
    log(`publish: ${versioned} was not recorded into the history ${history.dir} (${(e as Error).message}); the history is published as it stands`);
  }
  try {
    return exportHistory(history.dir, join(publishDir, PUBLISHED_HISTORY));
  } catch (e) {
    log(`publish: no history published (${(e as Error).message}); pullers record their own`);
    return null;
  }
}

/** Links every file the retained versions need into `out` and writes the history manifest there; null when nothing is retained. */
function exportHistory(dir: string, out: string): HistoryTransfer | null {
  const catalog = readCatalog(dir);
  if (catalog.versions.length === 0) return null;
  mkdirSync(out, { recursive: true });
  const previous = previousManifest(out);
  const manifest = historyManifestOf(
    catalog,
    (v) => readPacked<Recipe>(join(dir, recipeName(v.id))).packs,
    (name) => {
      const target = join(out, name);
      if (!existsSync(target)) linkOrCopy(join(dir, name), target);
      const size = statSync(target).size;
      // A file never changes under its name (a pack is named by its version and moment, a recipe by its version): its sum is reused.
      const known = previous?.files[name];
      return { size, sha256: known && known.size === size ? known.sha256 : sha256OfFile(target) };
    },
  );
  const text = `${JSON.stringify(manifest)}\n`;
  const sha256 = new Bun.CryptoHasher('sha256').update(text).digest('hex');
  const file = `history-${sha256.slice(0, 16)}.json`;
  writeTextAtomically(join(out, file), text);
  return { file: `${PUBLISHED_HISTORY}/${file}`, format: 'ipintel-history-1', size: Buffer.byteLength(text), sha256 };
}

/** The newest history manifest already in `out` (its sums are reused), or null. */
function previousManifest(out: string): HistoryManifest | null {
  const names = readdirSync(out).filter((n) => /^history-[0-9a-f]{16}\.json$/.test(n));
  const newest = names.map((n) => ({ n, at: statSync(join(out, n)).mtimeMs })).sort((a, b) => b.at - a.at)[0];
  if (!newest) return null;
  try {
    return JSON.parse(readFileSync(join(out, newest.n), 'utf8')) as HistoryManifest;
  } catch {
    return null;
  }
}

/** Removes from `publishDir/history/` every file the published history manifest `file` does not name (none when there is no history). */
export function pruneExportedHistory(publishDir: string, transfer: HistoryTransfer | null): void {
  const out = join(publishDir, PUBLISHED_HISTORY);
  if (!existsSync(out)) return;
  let keep = new Set<string>();
  if (transfer) {
    const name = transfer.file.slice(PUBLISHED_HISTORY.length + 1);
    keep = new Set([name, ...Object.keys((JSON.parse(readFileSync(join(out, name), 'utf8')) as HistoryManifest).files)]);
  }
  for (const name of readdirSync(out)) if (!keep.has(name)) rmSync(join(out, name), { force: true });
}
