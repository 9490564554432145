/**
 * Bun.build plugins for the worker bundle (worker-bundle.ts): Node built-in
 * modules two packages load at start for something a worker does not do
 * before its first lookup, each ~5–10 ms of CPU per thread (BENCHMARKS.md,
 * start-up), are left out of the bundle's start:
 *
 * - lru-cache's `node` build publishes its metrics and tracing channels on
 *   `node:diagnostics_channel`; nothing here subscribes to them. Its
 *   `browser` build is the same code with both channels a constant "no
 *   subscribers" (test/workers/bundle-lazy-builtins.test.ts checks that
 *   against the installed version).
 * - prom-client's metric classes `require('util')` at load, to format the
 *   message of an error thrown for a bad value; the bundle gives them an
 *   object that loads `node:util` on its first use.
 *
 * A start from the source (no bundle) loads the packages as they are.
 * Loaded only by a build, not by a start.
 */
import type { BunPlugin } from 'bun';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The file lru-cache's package.json names for `import` under the `browser` condition, or null (then the package is bundled as it resolves). */
export function lruCacheBrowserBuild(root: string): string | null {
  try {
    const folder = join(root, 'node_modules', 'lru-cache');
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { exports?: Record<string, { import?: { browser?: { default?: string } } }> };
    const file = manifest.exports?.['.']?.import?.browser?.default;
    return typeof file === 'string' && existsSync(join(folder, file)) ? join(folder, file) : null;
  } catch {
    return null;
  }
}

/** prom-client's load of node:util, and what replaces it: the same object's properties, read from node:util when first asked for. */
const PROM_UTIL = /^const util = require\('util'\);$/m;
const LAZY_UTIL = "let nodeUtil; const util = new Proxy({}, { get: (_, name) => (nodeUtil ??= require('node:util'))[name] });";

/** The plugins for the tree at `root`. */
export function lazyBuiltinPlugins(root: string): BunPlugin[] {
  const lruBrowser = lruCacheBrowserBuild(root);
  return [
    {
      name: 'node built-ins loaded on first use',
      setup(build) {
        if (lruBrowser) build.onResolve({ filter: /^lru-cache$/ }, () => ({ path: lruBrowser }));
        // Bun resolves a built-in before any plugin sees it: the require is rewritten where prom-client's files load.
        build.onLoad({ filter: /[\\/]node_modules[\\/]prom-client[\\/]lib[\\/][^\\/]+\.js$/ }, (args) => ({
          contents: readFileSync(args.path, 'utf8').replace(PROM_UTIL, LAZY_UTIL),
          loader: 'js',
        }));
      },
    },
  ];
}
