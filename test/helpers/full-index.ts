/**
 * The index built from every real snapshot (../shared/feeds/feeds.json),
 * cached in the temp folder under a fingerprint of the builder so test files
 * and runs share one build (about a minute on this machine).
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import { withDataDefaults } from '../../index-builder/default-sources.ts';
import { loadManifest } from '../../index-builder/manifest.ts';
import { builderFingerprint } from './fixture-index.ts';
import { FEEDS_DIR } from './recording-sink.ts';

let built: Promise<string> | null = null;

/** Path of the full real-snapshot index (built on first use). */
export function fullIndexPath(): Promise<string> {
  built ??= (async () => {
    const out = join(tmpdir(), `ipintel-full-${builderFingerprint(null)}.idx`);
    if (existsSync(out)) return out;
    await buildIndex({ sources: loadManifest(resolve(FEEDS_DIR, 'feeds.json')), out, quiet: true });
    return out;
  })();
  return built;
}

let builtWithDefaults: Promise<string> | null = null;

/**
 * Path of the index `build-index --manifest ../shared/feeds/feeds.json` makes
 * (every real snapshot plus the default DB-IP location and ASN data), built on
 * first use: where publishers' locations meet the third-party database's.
 */
export function fullIndexWithDefaultsPath(): Promise<string> {
  builtWithDefaults ??= (async () => {
    const out = join(tmpdir(), `ipintel-full-defaults-${builderFingerprint()}.idx`);
    if (existsSync(out)) return out;
    await buildIndex({ sources: withDataDefaults(loadManifest(resolve(FEEDS_DIR, 'feeds.json'))), out, quiet: true });
    return out;
  })();
  return builtWithDefaults;
}
