/**
 * `bun run build-index --manifest <feeds.json> --out <file> [--no-defaults] [--mmdb <file>]`
 * `bun run build-index --default [--out <file>]` builds the embedded default
 * (data packages + IPINTEL_FEEDS_DIR/feeds.json when present); `--mmdb` also
 * writes the index as a MaxMind DB (src/commands/export/mmdb.ts, handed in
 * by the entry src/commands/build-index.ts: the export answers as the API
 * does, which the builder below it must not import).
 * Exit 0 only when the file is complete and verified; 1 on a bad feed; 2 on usage.
 */
import { parseArgs } from 'node:util';
import { FeedError } from './feed/source.ts';
import { buildIndex } from './build.ts';
import { formatSummary } from './summary.ts';
import { defaultSources, packageSources, withDataDefaults } from './default-sources.ts';
import { loadManifest, ManifestError, type ResolvedSource } from './manifest.ts';
import type { KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PUBLISHED_INDEX, publishIndex } from '../src/index/publish/publish.ts';
import { parsePublishKeep } from '../src/index/publish/publish-keep.ts';
import { MAX_DEAD_SHARE } from './write/previous-index.ts';
import { readSigningKey } from '../src/index/publish/signing-keys.ts';
import { DEFAULT_FEEDS_DIR, DEFAULT_INDEX_PATH } from '../src/index/default-paths.ts';

/** What publishing needs from the configuration: the signing key file (IPINTEL_INDEX_SIGNING_KEY) and versions kept (IPINTEL_PUBLISH_KEEP). */
export interface PublishSigning {
  keyPath: string | null;
  keep: number;
}

/** The signing settings as the environment gives them: the builder's own CLI run directly sits below src/config.ts. */
function signingFromEnv(env: Record<string, string | undefined>): PublishSigning {
  return { keyPath: env.IPINTEL_INDEX_SIGNING_KEY?.trim() || null, keep: parsePublishKeep(env.IPINTEL_PUBLISH_KEEP) };
}

/** The publish directory, signing key and versions kept; throws when publishing cannot sign. */
export function publishSettings(dir: string, signing: PublishSigning): { dir: string; key: KeyObject; keep: number } {
  if (!signing.keyPath) throw new Error('IPINTEL_INDEX_SIGNING_KEY names no signing key; publishing refuses to write an unsigned index (make one with bun run index-keygen --out PREFIX)');
  return { dir, key: readSigningKey(signing.keyPath), keep: signing.keep };
}

/** The --help text: every flag of CLI_OPTIONS. */
export const USAGE = `usage: bun run build-index --manifest <feeds.json> [--out <file>] [--no-defaults] [--previous <file> | --no-previous] [--mmdb <file>] [--publish <dir>] [--quiet]
       bun run build-index --default [--out <file>] [--feeds-dir <dir>] [--previous <file> | --no-previous] [--mmdb <file>] [--publish <dir>] [--quiet]

Compiles feeds into one index file (written to a temp name, verified, then renamed into place).

  --manifest <file>   build from this feed manifest ({"sources": [...]}, paths relative to it). The embedded
                      default location and ASN sources (the @ip-location-db data packages) are included, except
                      the location one when the manifest has a geo-mmdb or geo-csv source and the ASN one when
                      it has an asn-csv source
  --no-defaults       with --manifest: the manifest's sources only (no default location or ASN data)
  --default           build the embedded default: the data packages plus <feeds-dir>/feeds.json when present
  --feeds-dir <dir>   with --default: the folder whose feeds.json is added (default IPINTEL_FEEDS_DIR, else feeds)
  --out <file>        the index file to write (default IPINTEL_INDEX, else ${DEFAULT_INDEX_PATH})
  --previous <file>   the index this build follows: strings, table rows and records equal to its own keep their
                      ids, so the new file differs from it only where the data did (small deltas for pulling
                      servers, small history). Default: the --out file when it exists, else with --publish the
                      published <dir>/${PUBLISHED_INDEX}. One that does not verify or is another format version
                      is ignored with one line; one carrying more than ${MAX_DEAD_SHARE * 100} % dead ids is ignored
                      (the build compacts). Answers never depend on it
  --no-previous       number ids afresh (a compact file; what a first build does)
  --mmdb <file>       also write the index as a MaxMind DB (GeoIP2-City/ASN/Anonymous-IP field names plus
                      ipintel's network, routing, score and classification; docs/deployment.md), atomically
  --publish <dir>     also publish the index for pulling servers: <dir>/ipintel.idx and its signed manifest
                      <dir>/ipintel.idx.json, keeping the newest IPINTEL_PUBLISH_KEEP versions (default 3); signed
                      with the ed25519 key in the file named by IPINTEL_INDEX_SIGNING_KEY (bun run index-keygen)
  --quiet             no progress bar and no summary table
  --help              this text

Exit status: 0 when the file is complete and verified, 1 when a feed or the manifest is bad, 2 on usage errors.`;

/** Every flag of the CLI (USAGE describes each). */
export const CLI_OPTIONS = {
  manifest: { type: 'string' },
  out: { type: 'string' },
  default: { type: 'boolean' },
  'no-defaults': { type: 'boolean' },
  'feeds-dir': { type: 'string' },
  previous: { type: 'string' },
  'no-previous': { type: 'boolean' },
  mmdb: { type: 'string' },
  publish: { type: 'string' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

/** Writes an index file as a MaxMind DB (src/commands/export/mmdb.ts exportIndexFile). */
export type MmdbExporter = (indexPath: string, mmdbPath: string) => { path: string; sizeBytes: number; nodeCount: number; values: number };

/** What the command running the builder hands it (src/commands/build-index.ts). */
export interface BuildCliOptions {
  /** Finds the data packages (default: the installed ones). */
  dataSources?: () => ResolvedSource[];
  /** Serves --mmdb (absent: --mmdb is refused). */
  exportMmdb?: MmdbExporter;
  /** The index written without --out (the configuration's IPINTEL_INDEX). */
  indexPath?: string;
  /** The feeds folder of --default without --feeds-dir (the configuration's IPINTEL_FEEDS_DIR). */
  feedsDir?: string;
  /** The signing settings of --publish (the configuration's IPINTEL_INDEX_SIGNING_KEY and IPINTEL_PUBLISH_KEEP). */
  signing?: PublishSigning;
}

/** The index a build follows by default: the file it replaces, else the one published in `publishDir`; none for a first build. */
export function defaultPrevious(out: string, publishDir: string | undefined): string | undefined {
  if (existsSync(out)) return out;
  const published = publishDir === undefined ? undefined : join(publishDir, PUBLISHED_INDEX);
  return published !== undefined && existsSync(published) ? published : undefined;
}

/** Runs the CLI with argv (without the runtime and script); returns the exit code. */
export async function main(argv: string[], options: BuildCliOptions = {}): Promise<number> {
  const { dataSources = packageSources, exportMmdb } = options;
  let args;
  try {
    args = parseArgs({ args: argv, options: CLI_OPTIONS, strict: true }).values;
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  if (!args.manifest === !args.default) {
    console.error(`give either --manifest or --default\n${USAGE}`);
    return 2;
  }
  if (args['no-defaults'] && !args.manifest) {
    console.error(`--no-defaults applies to --manifest builds\n${USAGE}`);
    return 2;
  }
  if (args.previous && args['no-previous']) {
    console.error(`give --previous or --no-previous, not both\n${USAGE}`);
    return 2;
  }
  if (args.mmdb && !exportMmdb) {
    console.error('--mmdb: run the build as `bun run build-index` (src/commands/build-index.ts), which writes the MaxMind DB');
    return 2;
  }
  const out = args.out ?? options.indexPath ?? (process.env.IPINTEL_INDEX?.trim() || DEFAULT_INDEX_PATH);
  let publishing: { dir: string; key: KeyObject; keep: number } | null = null;
  if (args.publish) {
    // Checked before the build: a publish that cannot sign must not cost a build first.
    try {
      publishing = publishSettings(args.publish, options.signing ?? signingFromEnv(process.env));
    } catch (e) {
      console.error(`--publish: ${(e as Error).message}`);
      return 2;
    }
  }
  try {
    let sources: ResolvedSource[];
    if (args.default) sources = defaultSources(args['feeds-dir'] ?? options.feedsDir ?? (process.env.IPINTEL_FEEDS_DIR?.trim() || DEFAULT_FEEDS_DIR), dataSources);
    else {
      const manifest = loadManifest(args.manifest!);
      sources = args['no-defaults'] ? manifest : withDataDefaults(manifest, dataSources);
    }
    // The embedded default is the index the server builds itself: its feed refresher may replace it (a manifest build is the operator's).
    const previous = args['no-previous'] ? undefined : (args.previous ?? defaultPrevious(out, args.publish));
    const summary = await buildIndex({ sources, out, quiet: args.quiet, managedBy: args.default ? 'server' : undefined, previous });
    if (!args.quiet) console.error(formatSummary(summary));
    if (args.mmdb) {
      const mmdb = exportMmdb!(out, args.mmdb);
      if (!args.quiet) console.error(`MaxMind DB ${mmdb.path}: ${(mmdb.sizeBytes / 1048576).toFixed(1)} MiB, ${mmdb.nodeCount} nodes, ${mmdb.values} values`);
    }
    if (publishing) {
      const published = await publishIndex({ indexPath: out, dir: publishing.dir, privateKey: publishing.key, keep: publishing.keep });
      if (!args.quiet) console.error(`published ${published.file} (sha256 ${published.sha256.slice(0, 16)}…) to ${publishing.dir}`);
    }
    console.log(out);
    return 0;
  } catch (e) {
    if (e instanceof FeedError || e instanceof ManifestError || (e as Error).name === 'DefaultDataMissingError') {
      console.error(`build failed: ${(e as Error).message}`);
      return 1;
    }
    console.error(`build failed: ${(e as Error).stack ?? e}`);
    return 1;
  }
}

if (import.meta.main) void main(process.argv.slice(2)).then((code) => process.exit(code));
