/**
 * `bun run build-index`: the index builder's command line (index-builder/cli.ts)
 * with the MaxMind DB export of `--mmdb` handed in, since the export answers
 * as the API does (src/commands/export/) and the builder sits below that.
 */
import { runBuildCommand, type ResolvedSource } from '../../index-builder/index.ts';
import { loadConfig } from '../config.ts';
import { exportIndexFile } from './export/mmdb.ts';

/** Runs the builder's command line with argv (after the script name), `dataSources` finding the data packages (default: the installed ones); resolves with the exit code. */
export async function buildIndexCommand(argv: string[], dataSources?: () => ResolvedSource[]): Promise<number> {
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  return runBuildCommand(argv, { dataSources, exportMmdb: (indexPath, mmdbPath) => exportIndexFile(indexPath, mmdbPath), indexPath: config.indexPath, feedsDir: config.feedsDir, signing: { keyPath: config.indexSigningKey, keep: config.publishKeep } });
}

if (import.meta.main) process.exit(await buildIndexCommand(process.argv.slice(2)));
