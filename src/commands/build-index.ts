/**
 * `bun run build-index`: the index builder's command line (index-builder/cli.ts)
 * with the MaxMind DB export of `--mmdb` handed in, since the export answers
 * as the API does (src/commands/export/) and the builder sits below that.
 */
import { main } from '../../index-builder/cli.ts';
import { packageSources } from '../../index-builder/default-sources.ts';
import { exportIndexFile } from './export/mmdb.ts';

/** Runs the builder's command line with argv (after the script name); resolves with the exit code. */
export function buildIndexCommand(argv: string[]): Promise<number> {
  return main(argv, packageSources, (indexPath, mmdbPath) => exportIndexFile(indexPath, mmdbPath));
}

if (import.meta.main) process.exit(await buildIndexCommand(process.argv.slice(2)));
