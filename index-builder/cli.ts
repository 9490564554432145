/**
 * `bun run build-index --manifest <feeds.json> --out <file>`
 * `bun run build-index --default [--out <file>]` builds the embedded default
 * (data packages + IPINTEL_FEEDS_DIR/feeds.json when present).
 * Exit 0 only when the file is complete and verified; 1 on a bad feed; 2 on usage.
 */
import { parseArgs } from 'node:util';
import { FeedError } from './feed/source.ts';
import { buildIndex, formatSummary } from './build.ts';
import { defaultSources, packageSources } from './default-sources.ts';
import { loadManifest, ManifestError, type ResolvedSource } from './manifest.ts';

const USAGE = `usage: bun run build-index --manifest <feeds.json> --out <file> [--with-defaults] [--quiet]
       bun run build-index --default [--out <file>] [--feeds-dir <dir>] [--quiet]`;

/** Runs the CLI with argv (without the runtime and script). Returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: argv,
      options: {
        manifest: { type: 'string' },
        out: { type: 'string' },
        default: { type: 'boolean' },
        'with-defaults': { type: 'boolean' },
        'feeds-dir': { type: 'string' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean' },
      },
      strict: true,
    }).values;
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  if (!args.manifest && !args.default) {
    console.error(`give --manifest or --default\n${USAGE}`);
    return 2;
  }
  const out = args.out ?? process.env.IPINTEL_INDEX ?? 'data/ipintel.idx';
  try {
    let sources: ResolvedSource[];
    if (args.default) sources = defaultSources(args['feeds-dir'] ?? process.env.IPINTEL_FEEDS_DIR ?? 'feeds');
    else sources = [...(args['with-defaults'] ? packageSources() : []), ...loadManifest(args.manifest!)];
    const summary = await buildIndex({ sources, out, quiet: args.quiet });
    if (!args.quiet) console.error(formatSummary(summary));
    console.log(out);
    return 0;
  } catch (e) {
    if (e instanceof FeedError || e instanceof ManifestError) {
      console.error(`build failed: ${e.message}`);
      return 1;
    }
    console.error(`build failed: ${(e as Error).stack ?? e}`);
    return 1;
  }
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
