/**
 * The index builder's face: all that src/ uses of the builder, and the only
 * file of it that src/ imports. What lies behind it (parsers, merge, write,
 * mmdb) may be reshaped without a caller knowing.
 *
 * Everything named here loads light: the serving process and each of its
 * workers load this file (the feeds' status, a manifest's check), so the
 * build itself and the builder's command line load only when first called.
 * Data goes in and comes back out: nothing here calls back into src/.
 */
import type { KeyObject } from 'node:crypto';
import type { BuildOptions } from './build.ts';
import type { BuildCliOptions, PublishSigning } from './build-command.ts';
import type { BuildSummary } from './summary.ts';

export { loadManifest, ManifestError, type ResolvedSource } from './manifest.ts';
export type { ManifestSource } from './sink.ts';
export { FeedError, FeedLimitError, type ReadLimits } from './feed/source.ts';
export { isKnownType } from './parsers/index.ts';
export { defaultSources, packageDataDate, packageSources, withDataDefaults, withFeedsDir } from './default-sources.ts';
export { measureFeedCopy, noCoverage, type FamilyCoverage, type FeedCoverage } from './feed-coverage.ts';
export { formatSummary, formatTable, type BuildSummary } from './summary.ts';
export { peakRssBytes } from './peak-memory.ts';
export { MmdbDataWriter, MmdbUint, type MmdbInput } from './mmdb/encoder.ts';
export { NO_DATA, type Ranges } from './mmdb/search-tree.ts';
export { MMDB_DATABASE_TYPE, writeMmdb } from './mmdb/writer.ts';
export type { BuildOptions, BuildCliOptions };
export type { MmdbExporter, PublishSigning } from './build-command.ts';

/** Builds one index file from `options.sources` (build.ts), loading the builder on first call; resolves with what it wrote. */
export async function buildIndex(options: BuildOptions): Promise<BuildSummary> {
  const build = await import('./build.ts');
  return build.buildIndex(options);
}

/** Runs the builder's command line (cli.ts) with argv (after the script name), loading it on first call; resolves with the exit code. */
export async function runBuildCommand(argv: string[], options?: BuildCliOptions): Promise<number> {
  const cli = await import('./build-command.ts');
  return cli.main(argv, options);
}

/** `--publish`'s directory, signing key and versions kept (cli.ts), loading the command line on first call; rejects when publishing cannot sign. */
export async function publishSettings(dir: string, signing: PublishSigning): Promise<{ dir: string; key: KeyObject; keep: number }> {
  const cli = await import('./build-command.ts');
  return cli.publishSettings(dir, signing);
}

/** The index a build to `out` follows by default (cli.ts), loading the command line on first call. */
export async function defaultPrevious(out: string, publishDir: string | undefined): Promise<string | undefined> {
  const cli = await import('./build-command.ts');
  return cli.defaultPrevious(out, publishDir);
}
