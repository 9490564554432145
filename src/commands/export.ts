/**
 * `ipintel export --mmdb <file> [--index <file>]`: writes an existing index
 * file as a MaxMind DB (src/commands/export/mmdb.ts), atomically.
 */
import { parseCommandLine } from './command-line.ts';
import { exportIndexFile } from './export/mmdb.ts';
import { DEFAULT_INDEX_PATH } from '../index/default-paths.ts';
import { IndexFileError } from '../index/map-index-file.ts';
import { loadConfig } from '../config.ts';
import { OverridesHolder } from '../lookup/overrides/holder.ts';

export const USAGE = `usage: ipintel export --mmdb <file> [--index <file>]

Writes the index (--index, else IPINTEL_INDEX, else ${DEFAULT_INDEX_PATH}) as a MaxMind DB: GeoIP2-City,
GeoLite2-ASN and GeoIP2-Anonymous-IP field names plus ipintel's network, routing, score and classification
(docs/deployment.md), with the operator's overrides (IPINTEL_OVERRIDES) laid over the index as the API
applies them. The file is written to a temp name, fsynced, checked and renamed into place.`;

/** Runs the command with argv (after the command name); resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandLine({ args: argv, strict: true, options: { mmdb: { type: 'string' }, index: { type: 'string' }, help: { type: 'boolean' } } }, USAGE);
  if (typeof parsed === 'number') return parsed;
  const args = parsed.values;
  if (!args.mmdb) {
    console.error(`give --mmdb <file>\n${USAGE}`);
    return 2;
  }
  try {
    const config = loadConfig();
    const index = args.index ?? config.indexPath;
    // The operator's overrides (IPINTEL_OVERRIDES) apply as the API applies them; a refused file exports none.
    const overrides = OverridesHolder.open(config.overridesPath);
    if (overrides.last && !overrides.last.applied) throw new Error(overrides.last.refused ?? 'overrides refused');
    const written = exportIndexFile(index, args.mmdb, overrides);
    console.error(`MaxMind DB ${written.path}: ${(written.sizeBytes / 1048576).toFixed(1)} MiB, ${written.nodeCount} nodes, ${written.values} values`);
    console.log(written.path);
    return 0;
  } catch (e) {
    console.error(`export failed: ${e instanceof IndexFileError ? e.message : (e as Error).message}`);
    return 1;
  }
}
