/**
 * A Bun.build plugin for the worker bundle (worker-bundle.ts): msgpackr's
 * optional native string extractor resolved once, when the bundle is built,
 * instead of in every thread at every start. At run time `msgpackr-extract`
 * asks node-gyp-build-optional-packages which prebuilt binary fits this
 * machine (detect-libc, a walk of the prebuilds: node:child_process, os, url
 * and module loaded for it), ~20–30 ms of CPU in the pool's thread, each
 * worker's and the index check's, for an answer that is the same every time
 * on one install. The bundle's key covers the installed packages, so a
 * reinstall builds it again. Loaded only by a build, not by a start.
 */
import type { BunPlugin } from 'bun';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The namespace of the plugin's one module (not a file: worker-bundle.ts exempts it from its inputs' check). */
export const NATIVE_EXTRACT_NAMESPACE = 'ipintel-native-extract';

/** The plugin for the tree at `root`; null when no prebuilt binary fits (msgpackr then runs without it, as it would). */
export function nativeExtractPlugin(root: string): BunPlugin | null {
  let binary: string;
  try {
    const fromRoot = createRequire(join(root, 'package.json'));
    const extract = fromRoot.resolve('msgpackr-extract');
    // The same choice msgpackr-extract's index.js makes at run time, made here with its own copy of the chooser.
    const chooser = createRequire(extract)('node-gyp-build-optional-packages') as { path(dir: string): string };
    binary = chooser.path(dirname(extract));
  } catch {
    return null;
  }
  return {
    name: 'msgpackr-extract, prebuilt binary chosen at build time',
    setup(build) {
      build.onResolve({ filter: /^msgpackr-extract$/ }, () => ({ path: 'msgpackr-extract', namespace: NATIVE_EXTRACT_NAMESPACE }));
      // Bun copies the binary beside the bundle and requires it by that relative name.
      build.onLoad({ filter: /.*/, namespace: NATIVE_EXTRACT_NAMESPACE }, () => ({ contents: `module.exports = require(${JSON.stringify(binary)});`, loader: 'js' }));
    },
  };
}
