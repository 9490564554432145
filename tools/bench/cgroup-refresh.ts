/**
 * A feed refresh of the real server inside a memory cgroup: does a small box
 * complete a round? The server (`bun run src/main.ts`, the `start` script)
 * runs in a new memory cgroup with its workers and refresh child, answering
 * GET /v1/ip/{random IPv4} from a few clients outside it, while its refresher
 * fetches every catalog feed of ../shared/feeds from a mirror on 127.0.0.1
 * and rebuilds from ../shared/feeds/feeds.json as the operator's manifest
 * with the default data: the full build (`build-index --manifest`). Reports whether the round
 * completed and the new index was swapped in, the answers during the round,
 * and the cgroup's peak usage, limit hits and OOM kills.
 *
 * Needs root and a cgroup v1 memory controller or cgroup v2.
 *
 *   bun tools/bench/cgroup-refresh.ts [--cgroup-mb 2048] [--memory-mb 256] [--workers 1] [--index FILE]
 *   (--memory-mb unset / --workers unset: the server's defaults, as a plain `bun run start`)
 *   bun tools/bench/cgroup-refresh.ts --first-start [--cgroup-mb 1024]   the first start instead: no index, the
 *                                                                       server builds the default in a child, then serves
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { loadCatalog, manifestEntryOf } from '../../src/feeds/catalog.ts';
import { fixtureIndexPath } from '../../test/helpers/fixture-index.ts';
import { FEEDS_DIR } from '../../test/helpers/recording-sink.ts';
import { mib, printTable } from './bench-kit.ts';
import { startScriptDefaults } from '../start-env.ts';

function option(argv: string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
}

const ROOT = resolve(import.meta.dir, '../..');
const argv = process.argv.slice(2);
const firstStart = argv.includes('--first-start');
const limitMb = Number(option(argv, '--cgroup-mb') ?? (firstStart ? 1024 : 2048));
const memoryMb = option(argv, '--memory-mb') ?? '256';
const workers = option(argv, '--workers') ?? '1';

/** A memory cgroup of its own (v1: the memory controller's hierarchy; v2: the unified one). */
interface Cgroup {
  dir: string;
  version: 1 | 2;
}

function createCgroup(limitBytes: number): Cgroup {
  const name = `ipintel-bench-${process.pid}`;
  if (existsSync('/sys/fs/cgroup/memory/memory.limit_in_bytes')) {
    const dir = `/sys/fs/cgroup/memory/${name}`;
    mkdirSync(dir);
    writeFileSync(join(dir, 'memory.limit_in_bytes'), String(limitBytes));
    return { dir, version: 1 };
  }
  if (existsSync('/sys/fs/cgroup/cgroup.controllers')) {
    const dir = `/sys/fs/cgroup/${name}`;
    mkdirSync(dir);
    writeFileSync(join(dir, 'memory.max'), String(limitBytes));
    return { dir, version: 2 };
  }
  throw new Error('no memory cgroup controller found (cgroup v1 memory or cgroup v2)');
}

/** The cgroup's peak usage, how often it hit its limit, and its OOM kills. */
function cgroupStats(cg: Cgroup): { peakBytes: number; limitHits: number; oomKills: number } {
  const read = (f: string) => readFileSync(join(cg.dir, f), 'utf8');
  const field = (text: string, key: string) => Number(new RegExp(`^${key} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  if (cg.version === 1) {
    return { peakBytes: Number(read('memory.max_usage_in_bytes')), limitHits: Number(read('memory.failcnt')), oomKills: field(read('memory.oom_control'), 'oom_kill') };
  }
  const events = read('memory.events');
  return { peakBytes: existsSync(join(cg.dir, 'memory.peak')) ? Number(read('memory.peak')) : NaN, limitHits: field(events, 'max'), oomKills: field(events, 'oom_kill') };
}

function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

const tmp = mkdtempSync(join(tmpdir(), 'ipintel-cgroup-bench-'));
const index = join(tmp, 'ipintel.idx');
const inherited = { ...(process.env as Record<string, string>) };
delete inherited.IPINTEL_WORKERS;
delete inherited.IPINTEL_MEMORY_MB;
const env: Record<string, string> = {
  ...inherited,
  HOST: '127.0.0.1',
  PORT: String(freePort()),
  IPINTEL_INDEX: index,
  IPINTEL_DB: join(tmp, 'accounts.sqlite'),
  IPINTEL_RATE_LIMITS: 'off',
  ...(workers === 'unset' ? {} : { IPINTEL_WORKERS: workers }),
  ...(memoryMb === 'unset' ? {} : { IPINTEL_MEMORY_MB: memoryMb }),
  IPINTEL_FEEDS_DIR: join(tmp, 'feeds'),
  MIMALLOC_PURGE_DELAY: process.env.MIMALLOC_PURGE_DELAY ?? startScriptDefaults().MIMALLOC_PURGE_DELAY,
};
let mirror: ReturnType<typeof Bun.serve> | null = null;
let feedCount = 0;
let localCount = 0;
if (firstStart) {
  // The first start: no index, no feeds folder, no refresh (the default build alone).
  env.IPINTEL_FEEDS_REFRESH = 'off';
} else {
  copyFileSync(option(argv, '--index') ?? (await fixtureIndexPath(FEEDS_DIR)), index);
  const feeds = loadCatalog().filter((f) => existsSync(join(FEEDS_DIR, f.path)));
  feedCount = feeds.length;
  // The operator manifest is ../shared/feeds/feeds.json, so the round builds what `build-index --manifest` of it
  // builds: its catalog feeds as empty placeholders the refresher fetches from the mirror, the rest (snapshots
  // under other names than the catalog's: the routing tables, the delegation files...) as local copies it keeps.
  const operator = JSON.parse(readFileSync(join(FEEDS_DIR, 'feeds.json'), 'utf8')) as { sources: { path: string }[] };
  const catalogPaths = new Set(feeds.map((f) => f.path));
  for (const f of feeds) {
    mkdirSync(dirname(join(tmp, f.path)), { recursive: true });
    writeFileSync(join(tmp, f.path), '');
  }
  let local = 0;
  for (const s of operator.sources) {
    if (catalogPaths.has(s.path)) continue;
    mkdirSync(dirname(join(tmp, s.path)), { recursive: true });
    copyFileSync(join(FEEDS_DIR, s.path), join(tmp, s.path));
    local++;
  }
  const catalogEntries = new Map(feeds.map((f) => [f.path, manifestEntryOf(f)]));
  writeFileSync(join(tmp, 'feeds.json'), JSON.stringify({ sources: operator.sources.map((s) => catalogEntries.get(s.path) ?? s) }));
  localCount = local;
  mirror = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => {
      const path = decodeURIComponent(new URL(req.url).pathname).replace(/^\/+/, '');
      return feeds.some((f) => f.path === path) ? new Response(Bun.file(join(FEEDS_DIR, path))) : new Response('not found', { status: 404 });
    },
  });
  env.IPINTEL_FEEDS_MANIFEST = join(tmp, 'feeds.json');
  env.IPINTEL_FEEDS_MIRROR = `http://127.0.0.1:${mirror.port}`;
}

const cg = createCgroup(limitMb * 1048576);
const base = `http://127.0.0.1:${env.PORT}`;
// The shell joins the cgroup, then becomes the server: every process it starts is counted there too.
const server = Bun.spawn(['sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', cg.dir, process.execPath, 'run', 'src/main.ts'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' });
const log: string[] = [];
const collect = async (s: ReadableStream<Uint8Array>) => {
  for await (const chunk of s) log.push(new TextDecoder().decode(chunk));
};
// Awaited after the server exits; a read error is logged, not left as an unhandled rejection.
const drained = Promise.all([collect(server.stdout), collect(server.stderr)]).catch((e) => {
  log.push(`\n(server output cut: ${(e as Error).message})`);
});

const health = async (): Promise<{ built_at: string; generation: number } | null> => {
  try {
    const r = await fetch(`${base}/health`);
    return r.ok ? (((await r.json()) as { index: { built_at: string; generation: number } }).index ?? null) : null;
  } catch {
    return null;
  }
};

const t0 = performance.now();
const seconds = () => ((performance.now() - t0) / 1000).toFixed(1);
const answers = { ok: 0, failed: 0 };
let loading = true;
/** A client outside the cgroup asking for random IPv4 addresses, one request at a time. */
async function client(): Promise<void> {
  while (loading) {
    const ip = `${1 + Math.floor(Math.random() * 222)}.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}`;
    try {
      const r = await fetch(`${base}/v1/ip/${ip}`);
      await r.arrayBuffer();
      r.ok ? answers.ok++ : answers.failed++;
    } catch {
      answers.failed++;
      await Bun.sleep(50);
    }
  }
}

const rows: (string | number)[][] = [['', 'value']];
let outcome = 'did not finish';
try {
  // Serving (after the first start's build, when there was no index).
  let first: Awaited<ReturnType<typeof health>> = null;
  const startLimit = Date.now() + 15 * 60_000;
  while (!(first = await health())) {
    if (server.exitCode !== null || Date.now() > startLimit) throw new Error(`the server did not start (exit ${server.exitCode}): ${log.join('').slice(-2000)}`);
    await Bun.sleep(500);
  }
  rows.push(['serving after', `${seconds()} s (index built ${first.built_at})`]);
  const clients = Array.from({ length: 4 }, () => client());
  if (firstStart) {
    await Bun.sleep(10_000);
    outcome = 'built and served';
  } else {
    const statePath = `${index}.feeds-state.json`;
    const lastRun = () => (existsSync(statePath) ? (JSON.parse(readFileSync(statePath, 'utf8')).lastRun ?? null) : null);
    const roundLimit = Date.now() + 20 * 60_000;
    while (lastRun() === null && Date.now() < roundLimit && server.exitCode === null) await Bun.sleep(1000);
    const run = lastRun();
    const peak = run?.peakRssBytes ? mib(run.peakRssBytes) : 'unknown';
    rows.push(['refresh round', run ? `${run.outcome}${run.reason ? ` (${run.reason})` : ''} after ${seconds()} s, child peak RSS ${peak}` : 'none']);
    // The swap: the server answers from an index built by this round.
    let now = await health();
    const swapLimit = Date.now() + 120_000;
    while (run?.outcome === 'ok' && now?.built_at === first.built_at && Date.now() < swapLimit) {
      await Bun.sleep(500);
      now = await health();
    }
    const swapped = now !== null && now.built_at !== first.built_at;
    rows.push(['new index swapped in', swapped ? `yes (built ${now!.built_at}, generation ${now!.generation})` : 'no']);
    outcome = run?.outcome === 'ok' && swapped ? 'completed' : 'failed';
  }
  loading = false;
  await Promise.all(clients);
} finally {
  loading = false;
  const stats = cgroupStats(cg);
  server.kill('SIGTERM');
  const killed = setTimeout(() => server.kill('SIGKILL'), 10_000);
  await server.exited;
  clearTimeout(killed);
  await drained;
  mirror?.stop(true);
  rows.push(['answers during the run', `${answers.ok} ok, ${answers.failed} failed`]);
  rows.push([`cgroup v${cg.version} limit`, `${limitMb} MiB`]);
  rows.push(['cgroup peak usage (RSS + page cache)', mib(stats.peakBytes)]);
  rows.push(['times at the limit (v1 failcnt / v2 max)', stats.limitHits]);
  rows.push(['OOM kills', stats.oomKills]);
  printTable(rows);
  console.log(`\n${firstStart ? 'first start' : `refresh of ${feedCount} catalog feeds + ${localCount} local files of ../shared/feeds/feeds.json + the default data`} with IPINTEL_WORKERS=${workers} IPINTEL_MEMORY_MB=${memoryMb} in a ${limitMb} MiB cgroup: ${outcome}`);
  if (outcome === 'did not finish' || outcome === 'failed') console.log(log.join('').slice(-3000));
  try {
    rmdirSync(cg.dir);
  } catch (e) {
    console.error(`could not remove ${cg.dir}: ${(e as Error).message}`);
  }
  rmSync(tmp, { recursive: true, force: true });
  if (outcome === 'failed' || outcome === 'did not finish') process.exitCode = 1;
}
