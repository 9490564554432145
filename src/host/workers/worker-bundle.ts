/**
 * The worker thread's code, the pool's the primary loads meanwhile, and a
 * one-thread host's (single-host.ts, IPINTEL_WORKERS=1), as prebuilt bytecode bundles for starts from the source tree: each loads in
 * about half the time its hundreds of modules take one by one (BENCHMARKS.md,
 * start-up).
 *
 * The bundle lives in node_modules/.cache/ipintel-worker-bundle/<key>/,
 * where the key hashes everything it could have been built from: every file
 * (by its inode, size and times)
 * under src/ and index-builder/ and the feeds' catalog, the install (bun.lock, package.json,
 * tsconfig.json, bunfig.toml and the installed packages' folders), this
 * tree's absolute path (the bundle names the sub-workers, migrations and
 * bun.lock by their absolute paths in the source tree) and Bun's version and
 * revision. A start serves the bundle only when its key is the current one,
 * else the source: never a stale bundle. `bun run start` and `bun run bundle`
 * build it (src/commands/worker-bundle.ts); not `bun install`, which the
 * container build runs before the sources are there.
 *
 * Tiny on purpose, like threads.ts: the primary reads it before any thread starts.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** This source tree's root (this file is src/host/workers/worker-bundle.ts). */
export const SOURCE_ROOT = resolve(import.meta.dir, '..', '..', '..');
/** Where a tree's bundles are kept. */
export function bundleCache(root: string): string {
  return join(root, 'node_modules', '.cache', 'ipintel-worker-bundle');
}
/** The bundle's entry points in a tree: the worker's module, the pool the primary loads meanwhile, and the one-thread host. */
function entriesOf(root: string): string[] {
  return [...['worker-main.ts', 'pool.ts'].map((name) => join(root, 'src', 'host', 'workers', name)), join(root, 'src', 'host', 'single-host.ts')];
}
/** Their names in a bundle's folder (flat: `naming` below). */
const BUNDLED_ENTRY = 'worker-main.js';
const BUNDLED_POOL = 'pool.js';
const BUNDLED_SINGLE_HOST = 'single-host.js';
/** The tree's folders the bundle's own inputs come from (a build that reads from another fails: see buildWorkerBundle). */
const HASHED_FOLDERS = ['src', 'index-builder'];
/**
 * Files outside those folders the bundle reads: the feeds' catalog. Not the
 * rest of feeds/, where the refresher downloads (IPINTEL_FEEDS_DIR's default):
 * a refresh round would otherwise make the bundle stale, and every start
 * after it load the source.
 */
const HASHED_FILES = ['feeds/catalog.json'];
/**
 * Packages only code off the lookup path imports, on its first use (the
 * geofeed parser, time zones, sign-in, Elysia's file checks, the crawler
 * verifier's UDP client), that no bundled module shares state with: left out
 * of the bundle and required from the tree's node_modules when first used.
 * Bytes a worker never runs still cost its start (BENCHMARKS.md, start-up).
 */
export const LAZY_PACKAGES = ['iso-3166', '@photostructure/tz-lookup', 'arctic', 'file-type', 'dns-packet'];
/** Bundles kept beside the current one (a server still running an older one may restart a worker from it). */
const KEEP = 3;

/**
 * Adds every file under `dir` (sorted, recursively) to the hash by path,
 * inode, size and change time: any write to a file moves its ctime (which no
 * one can set back), and stating the tree's ~400 files costs a few ms on the
 * primary's path where reading them costs tens. Names as plain strings and
 * times as numbers (sub-microsecond): Dirent objects and bigint stats cost
 * ~10 ms more here, before any thread can start.
 */
function hashTree(hasher: Bun.CryptoHasher, dir: string): void {
  if (!existsSync(dir)) return;
  const names = (readdirSync(dir, { recursive: true }) as string[]).sort();
  for (const name of names) hashFile(hasher, join(dir, name));
}

/** Adds one file to the hash by path, inode, size and times (nothing for a folder or a missing file). */
function hashFile(hasher: Bun.CryptoHasher, path: string): void {
  if (!existsSync(path)) return;
  const s = statSync(path);
  if (s.isFile()) hasher.update(`${path}\0${s.ino}\0${s.size}\0${s.mtimeMs}\0${s.ctimeMs}\0`);
}

/** The key of a bundle built from the tree at `root` now (hex). */
export function bundleKey(root = SOURCE_ROOT): string {
  const hasher = new Bun.CryptoHasher('sha256');
  hasher.update(`${root}\0${Bun.version}\0${Bun.revision}\0`);
  for (const dir of HASHED_FOLDERS) hashTree(hasher, join(root, dir));
  for (const file of HASHED_FILES) hashFile(hasher, join(root, file));
  for (const file of ['bun.lock', 'package.json', 'tsconfig.json', 'bunfig.toml']) {
    hasher.update(file);
    if (existsSync(join(root, file))) hasher.update(readFileSync(join(root, file)));
  }
  // The installed packages: a folder's time changes when a package is added, replaced or removed.
  const modules = join(root, 'node_modules');
  for (const name of existsSync(modules) ? readdirSync(modules).sort() : []) {
    if (name === '.cache') continue;
    hasher.update(`${name}\0${statSync(join(modules, name)).mtimeMs}\0`);
  }
  return hasher.digest('hex').slice(0, 32);
}

/** The bundle's entry for the tree as it is now, or null when there is none (or only stale ones). */
export function freshWorkerBundle(root = SOURCE_ROOT): string | null {
  try {
    if (!existsSync(bundleCache(root))) return null;
    const folder = join(bundleCache(root), bundleKey(root));
    return complete(folder) ? join(folder, BUNDLED_ENTRY) : null;
  } catch {
    return null; // an unreadable tree or cache: the source
  }
}

/** Whether a bundle's folder holds every entry point. */
function complete(folder: string): boolean {
  return [BUNDLED_ENTRY, BUNDLED_POOL, BUNDLED_SINGLE_HOST].every((name) => existsSync(join(folder, name)));
}

/** The pool's module of the bundle whose worker entry is `entry` (what freshWorkerBundle returned). */
export function bundledPool(entry: string): string {
  return join(dirname(entry), BUNDLED_POOL);
}

/** The one-thread host's module of the bundle whose worker entry is `entry`. */
export function bundledSingleHost(entry: string): string {
  return join(dirname(entry), BUNDLED_SINGLE_HOST);
}

/** What buildWorkerBundle did. */
export type BundleOutcome = { kind: 'fresh' | 'built'; entry: string } | { kind: 'failed'; message: string };

/**
 * Builds the bundle for this tree unless the current one exists: into a
 * temporary folder renamed into place (a concurrent build of the same key
 * leaves one), then removes all but the newest few.
 */
export async function buildWorkerBundle(root = SOURCE_ROOT): Promise<BundleOutcome> {
  const cache = bundleCache(root);
  let temp = '';
  try {
    const key = bundleKey(root);
    const target = join(cache, key);
    if (complete(target)) return { kind: 'fresh', entry: join(target, BUNDLED_ENTRY) };
    mkdirSync(cache, { recursive: true });
    temp = join(cache, `.tmp-${key}-${process.pid}`);
    rmSync(temp, { recursive: true, force: true });
    // CommonJS: Bun writes bytecode for ESM only with --compile. import.meta.url/dir become the source file's own.
    const { NATIVE_EXTRACT_NAMESPACE, nativeExtractPlugin } = await import('./bundle-native-extract.ts');
    const { lazyBuiltinPlugins } = await import('./bundle-lazy-builtins.ts');
    const plugins = [nativeExtractPlugin(root), ...lazyBuiltinPlugins(root)].filter((plugin) => plugin !== null);
    const built = await Bun.build({ entrypoints: entriesOf(root), outdir: temp, naming: '[name].[ext]', target: 'bun', format: 'cjs', bytecode: true, metafile: true, plugins, external: [...LAZY_PACKAGES] });
    if (!built.success) return { kind: 'failed', message: built.logs.map(String).join('\n') };
    const inputs = Object.keys(built.metafile?.inputs ?? {})
      .filter((input) => !input.startsWith(`${NATIVE_EXTRACT_NAMESPACE}:`))
      .map((input) => relative(root, resolve(input)));
    const unhashed = inputs.filter((input) => !input.includes('node_modules/') && !HASHED_FOLDERS.some((dir) => input.startsWith(`${dir}/`)) && !HASHED_FILES.includes(input));
    if (unhashed.length > 0 || !built.metafile) return { kind: 'failed', message: `inputs outside ${[...HASHED_FOLDERS, ...HASHED_FILES].join(', ')} (the key would not cover them): ${unhashed.join(', ')}` };
    if (bundleKey(root) !== key) return { kind: 'failed', message: 'the sources changed while building' };
    try {
      renameSync(temp, target);
    } catch (e) {
      if (!complete(target)) throw e; // else another build of the same key won
    }
    pruneOlder(cache, key);
    return { kind: 'built', entry: join(target, BUNDLED_ENTRY) };
  } catch (e) {
    const causes = e instanceof AggregateError ? e.errors.map(String) : [];
    return { kind: 'failed', message: [(e as Error).message, ...causes].join('\n') };
  } finally {
    if (temp) rmSync(temp, { recursive: true, force: true });
  }
}

/** Removes all but the KEEP newest bundles (by folder time), never the current one. */
function pruneOlder(cache: string, current: string): void {
  const others = readdirSync(cache)
    .filter((name) => name !== current && !name.startsWith('.tmp-'))
    .map((name) => ({ name, time: statSync(join(cache, name)).mtimeMs }))
    .sort((a, b) => b.time - a.time);
  for (const { name } of others.slice(KEEP - 1)) rmSync(join(cache, name), { recursive: true, force: true });
}
