/**
 * The one check of an index file against its signed manifest, made wherever
 * a file is about to be believed: a pulled download before its swap, the
 * pulled file at a restart (its sidecar manifest), and the publisher's folder
 * after each publish. A file is believed only when its hash matches a
 * manifest the configured key signed and whose build time is in its window.
 */
import type { KeyObject } from 'node:crypto';
import { statSync } from 'node:fs';
import { sha256OfFile } from '../file-sha256.ts';
import { FORMAT_VERSION } from '../format.ts';
import { mapIndexFile } from '../map-index-file.ts';
import { buildTimeRefusal } from './manifest-window.ts';
import { ManifestRefusal, verifyManifest, type PublishedManifest } from './signed-manifest.ts';

/** What a manifest is checked against. */
export interface ManifestRules {
  publicKey: KeyObject;
  now: number;
  /** Oldest build accepted (IPINTEL_INDEX_MAX_AGE); Infinity: any. */
  maxAgeMs: number;
}

/** The manifest in `text` when its signature verifies, it names this server's index format and its build time is in the window; throws ManifestRefusal. */
export function acceptManifest(text: string, rules: ManifestRules): PublishedManifest {
  const manifest = verifyManifest(text, rules.publicKey);
  if (manifest.format_version !== FORMAT_VERSION) {
    throw new ManifestRefusal(`manifest is for index format ${manifest.format_version}; this server reads ${FORMAT_VERSION}`);
  }
  const refusal = buildTimeRefusal(manifest.built_at, rules.now, rules.maxAgeMs);
  if (refusal) throw new ManifestRefusal(refusal);
  return manifest;
}

/** The manifest when acceptManifest takes it and the file at `path` has its size and sha256, passes the index's own checks and names its build time; throws ManifestRefusal naming the first failure. */
export function verifyIndexFile(path: string, manifestText: string, rules: ManifestRules): PublishedManifest {
  const manifest = acceptManifest(manifestText, rules);
  let size: number;
  try {
    size = statSync(path).size;
  } catch (e) {
    throw new ManifestRefusal(`cannot read the index (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (size !== manifest.size) throw new ManifestRefusal(`index is ${size} bytes; its signed manifest says ${manifest.size}`);
  if (sha256OfFile(path) !== manifest.sha256) throw new ManifestRefusal('index sha256 differs from its signed manifest');
  let builtAtMs: number;
  try {
    builtAtMs = mapIndexFile(path).builtAtMs; // magic, version, header and every section's checksum
  } catch (e) {
    throw new ManifestRefusal(`index refused: ${(e as Error).message}`);
  }
  if (builtAtMs !== Date.parse(manifest.built_at)) throw new ManifestRefusal('the index header names another build time than its manifest');
  return manifest;
}
