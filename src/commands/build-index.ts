/**
 * `build-index` (`bun run build-index`, `ipintel build-index`): the index
 * builder's command line (index-builder/build-command.ts) with what only the
 * program above it knows handed in: where the default data lives (installed
 * packages, IPINTEL_DATA_DIR, beside the binary; fetched first when missing
 * and asked for), and the MaxMind DB export of `--mmdb`, which answers as the
 * API does (src/commands/export/).
 */
import { runBuildCommand } from '../../index-builder/index.ts';
import { loadConfig } from '../config.ts';
import { ensureDefaultData, findDataSources, isCompiledBinary } from '../feeds/default-data.ts';
import { exportIndexFile } from './export/mmdb.ts';

/** Runs the build command with argv (after the command name); resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  const dataDir = config.dataDir ?? undefined;
  const env = { IPINTEL_DATA_DIR: dataDir, IPINTEL_INDEX: config.indexPath };
  // A binary (or a data folder) without the default data fetches the pinned packages before a default build.
  if (argv.includes('--default') && !argv.includes('--help') && (isCompiledBinary() || dataDir)) {
    try {
      await ensureDefaultData(config.dataRegistry, env);
    } catch (e) {
      console.error(`build failed: ${(e as Error).message}`);
      return 1;
    }
  }
  return runBuildCommand(argv, {
    dataSources: () => findDataSources(env),
    exportMmdb: (indexPath, mmdbPath) => exportIndexFile(indexPath, mmdbPath),
    indexPath: config.indexPath,
    feedsDir: config.feedsDir,
    signing: { keyPath: config.indexSigningKey, keep: config.publishKeep },
  });
}
