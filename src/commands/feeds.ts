/**
 * `bun run feeds update [--dir feeds/] ...`: refresh every public feed of
 * the catalog, write feeds.json, rebuild the index and optionally ask a
 * running server to reload it. `bun run feeds list` prints the catalog.
 * Exit 0 when every feed is fresh and the build (and reload) worked; 1 when a
 * feed kept its previous copy or is missing, or the build or reload failed;
 * 2 on a usage or catalog error.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { loadConfig, type Config } from '../config.ts';
import { parseCommandLine } from './command-line.ts';
import { DEFAULT_INDEX_PATH } from '../index/default-paths.ts';
import { buildIndex, FeedError, formatSummary, formatTable, loadManifest, ManifestError } from '../../index-builder/index.ts';
import { acquireLock, HEARTBEAT_MS } from '../feeds/lock.ts';
import { CatalogError, loadCatalog, type CatalogFeed } from '../feeds/catalog.ts';
import { DefaultDataMissingError, findDefaultSources } from '../feeds/default-data.ts';
import { operatorEntries, writeFeedsManifest } from '../feeds/manifest-writer.ts';
import { requestReload } from '../feeds/reload-request.ts';
import { hasGoodCopy, updateFeeds, type FeedOutcome } from '../feeds/update.ts';
import { loadRefreshState, newFeedRecord, recordOutcome, saveRefreshState, statePathOf } from '../feeds/feed-state.ts';

const USAGE = `usage: feeds update [--dir <feeds dir>] [--index <file>] [--reload <url>] [--mirror <url>]
                    [--catalog <file>] [--no-defaults] [--no-build] [--force]
                    [--accept <feed path>]... [--timeout <seconds>] [--max-mb <n>] [--quiet]
       feeds list [--catalog <file>]

  --dir        feeds folder (default IPINTEL_FEEDS_DIR or feeds); copies and feeds.json go here
  --index      index to rebuild (default IPINTEL_INDEX or ${DEFAULT_INDEX_PATH})
  --reload     POST this URL (e.g. http://127.0.0.1:8080/reload) with IPINTEL_ADMIN_TOKEN after the build;
               repeat it for every server process that maps the index
  --mirror     fetch <mirror>/<path> instead of each publisher URL (env IPINTEL_FEEDS_MIRROR)
  --catalog    feed catalog (default IPINTEL_FEEDS_CATALOG, else the bundled feeds/catalog.json)
  --no-defaults  build the index from the feeds only, without the embedded default data
  --no-build   only refresh the copies and feeds.json
  --force      rebuild even when no copy changed
  --accept     take this feed's new copy however far it moved from the previous one (rows, coverage);
               the bounds every copy meets still hold (docs/feeds-update.md); repeatable
  --timeout    per-download deadline in seconds (default 300)
  --max-mb     a ceiling on every feed's own size bound (default: the feed's bound)`;

/** Runs the feeds command with argv (after `feeds`); resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandLine(
    {
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        dir: { type: 'string' },
        index: { type: 'string' },
        reload: { type: 'string', multiple: true },
        mirror: { type: 'string' },
        catalog: { type: 'string' },
        'no-defaults': { type: 'boolean' },
        'no-build': { type: 'boolean' },
        force: { type: 'boolean' },
        accept: { type: 'string', multiple: true },
        timeout: { type: 'string' },
        'max-mb': { type: 'string' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    },
    USAGE,
  );
  if (typeof parsed === 'number') return parsed;
  const o = parsed.values;
  const [command, ...rest] = parsed.positionals;
  if (rest.length > 0 || (command !== 'update' && command !== 'list')) {
    console.error(USAGE);
    return 2;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  let catalog: CatalogFeed[];
  try {
    catalog = loadCatalog(o.catalog ?? config.feedsCatalog ?? undefined);
  } catch (e) {
    if (!(e instanceof CatalogError)) throw e;
    console.error(e.message);
    return 2;
  }
  if (command === 'list') {
    console.log(formatTable(['path', 'type', 'url', 'licence'], catalog.map((f) => [f.path, f.type, f.url, f.licence])));
    return 0;
  }
  const timeoutS = Number(o.timeout ?? 300);
  const maxMb = o['max-mb'] === undefined ? Infinity : Number(o['max-mb']);
  if (!(timeoutS > 0) || !(maxMb > 0)) {
    console.error(`--timeout and --max-mb must be positive numbers\n${USAGE}`);
    return 2;
  }
  const accept = new Set(o.accept ?? []);
  const unknown = [...accept].filter((p) => !catalog.some((f) => f.path === p));
  if (unknown.length > 0) {
    console.error(`--accept names no catalog feed: ${unknown.join(', ')} (see feeds list)`);
    return 2;
  }
  return runUpdate({
    feedsDir: resolve(o.dir ?? config.feedsDir),
    indexPath: o.index ?? config.indexPath,
    reloadUrls: o.reload ?? [],
    adminToken: config.adminToken,
    mirror: o.mirror ?? config.feedsMirror,
    catalog,
    withDefaults: !o['no-defaults'],
    build: !o['no-build'],
    force: o.force ?? false,
    accept,
    limits: { timeoutMs: timeoutS * 1000, maxBytes: maxMb * 1048576 },
    quiet: o.quiet ?? false,
  });
}

interface RunOptions {
  feedsDir: string;
  indexPath: string;
  /** Every server process on this host that maps the index. */
  reloadUrls: string[];
  /** Sent with each reload (IPINTEL_ADMIN_TOKEN). */
  adminToken: string | null;
  mirror: string | null;
  catalog: CatalogFeed[];
  withDefaults: boolean;
  build: boolean;
  force: boolean;
  accept: ReadonlySet<string>;
  limits: { timeoutMs: number; maxBytes: number };
  quiet: boolean;
}

/** The update under the refresh lock of the index (the server's refresher takes the same one). */
async function runUpdate(r: RunOptions): Promise<number> {
  const lockPath = `${resolve(r.indexPath)}.feeds.lock`;
  mkdirSync(dirname(lockPath), { recursive: true });
  let lock;
  try {
    lock = acquireLock(lockPath);
  } catch (e) {
    console.error(`cannot take the refresh lock ${lockPath}: ${(e as Error).message}`);
    return 1;
  }
  if (!lock) {
    console.error(`another refresh of ${r.indexPath} is running (${lockPath}); try again when it is done`);
    return 1;
  }
  // Touched while the update runs, so the server's refresher does not take it over as abandoned.
  const heartbeat = setInterval(() => {
    try {
      lock.heartbeat();
    } catch {}
  }, HEARTBEAT_MS);
  try {
    return await updateUnlocked(r);
  } finally {
    clearInterval(heartbeat);
    lock.release();
  }
}

/** The update, the manifest, the build and the reload, with progress on stderr. */
async function updateUnlocked(r: RunOptions): Promise<number> {
  const log = r.quiet ? () => {} : (line: string) => console.error(line);
  const manifestPath = join(r.feedsDir, 'feeds.json');
  let kept;
  try {
    kept = operatorEntries(manifestPath, r.catalog);
  } catch (e) {
    console.error((e as Error).message);
    return 1;
  }
  log(`updating ${r.catalog.length} feeds in ${r.feedsDir}${r.mirror ? ` from mirror ${r.mirror}` : ''}`);
  // The feed state the server's refresher keeps beside the index: the accepted copies' summaries are the baselines, and what this run accepts or refuses is recorded there.
  const statePath = statePathOf(r.indexPath);
  const state = loadRefreshState(statePath);
  const recordOf = (f: CatalogFeed) => (state.feeds[f.path] ??= newFeedRecord(existsSync(join(r.feedsDir, f.path))));
  const outcomes = await updateFeeds({
    feedsDir: r.feedsDir,
    catalog: r.catalog,
    mirror: r.mirror,
    limits: r.limits,
    log,
    previousOf: (f) => recordOf(f).copy ?? null,
    accept: r.accept,
  });
  const at = Date.now();
  for (const x of outcomes) recordOutcome(recordOf(x.feed), x, at);
  // Without a build here, the server's refresher must build (it rebuilds on its next refresh).
  if (!r.build && outcomes.some((x) => x.status === 'updated')) state.buildPending = true;
  try {
    mkdirSync(dirname(statePath), { recursive: true });
    saveRefreshState(statePath, state);
  } catch (e) {
    console.error(`feed state: ${statePath} not written: ${(e as Error).message}`);
  }
  const manifest = writeFeedsManifest(r.feedsDir, outcomes.filter(hasGoodCopy).map((x) => x.feed), kept);
  console.error(`\n${summaryTable(outcomes)}\n`);
  console.error(`manifest: ${manifest.path} (${manifest.changed ? 'rewritten' : 'unchanged'})`);
  let ok = outcomes.every((x) => x.status === 'updated' || x.status === 'unchanged');

  if (!r.build) return ok ? 0 : 1;
  const changed = manifest.changed || outcomes.some((x) => x.status === 'updated');
  if (!changed && !r.force && existsSync(r.indexPath)) {
    console.error(`index: ${r.indexPath} kept (no feed changed; --force rebuilds)`);
    return ok ? 0 : 1;
  }
  try {
    const sources = r.withDefaults ? findDefaultSources(r.feedsDir) : loadManifest(manifestPath);
    if (sources.length === 0) throw new ManifestError(`${manifestPath}: no feed has a good copy; nothing to build`);
    // With the default data this is the index the server builds itself (its refresher may go on refreshing it).
    // The file it replaces: the new one keeps its ids (small deltas and history).
    const previous = existsSync(r.indexPath) ? r.indexPath : undefined;
    const summary = await buildIndex({ sources, out: r.indexPath, quiet: r.quiet, managedBy: r.withDefaults ? 'server' : undefined, previous });
    if (!r.quiet) console.error(formatSummary(summary));
    console.error(`index: ${r.indexPath} rebuilt`);
  } catch (e) {
    const known = e instanceof FeedError || e instanceof ManifestError || e instanceof DefaultDataMissingError;
    console.error(`index: build failed, ${r.indexPath} unchanged: ${known ? (e as Error).message : ((e as Error).stack ?? e)}`);
    return 1;
  }
  for (const url of r.reloadUrls) {
    const reload = await requestReload(url, r.adminToken);
    console.error(`reload: ${url} -> ${reload.status || 'no answer'} ${reload.detail}`);
    ok &&= reload.ok;
  }
  return ok ? 0 : 1;
}

/** One row per feed: what happened and why. */
function summaryTable(outcomes: FeedOutcome[]): string {
  return formatTable(
    ['feed', 'status', 'rows', 'previous', 'bytes', 'reason'],
    outcomes.map((o) => [o.feed.path, o.status, o.rows ?? '-', o.previousRows ?? '-', o.bytes ?? '-', o.reason ?? '']),
  );
}
