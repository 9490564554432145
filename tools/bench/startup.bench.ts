/**
 * Time from process start to the first 200 of GET /health, with the index
 * present, for indexes of different sizes (the target is under 300 ms with
 * the default worker count, and flat in index size), with the default worker
 * count (IPINTEL_WORKERS unset: the CPUs) and with one worker. Baseline in
 * the same run: a bare Bun.serve script started the same way. Also the
 * server's CPU time (every thread) at its first 200, and IndexReader.open
 * in-process (with and without checksum verification) to show where any size
 * dependence comes from.
 *
 *   bun tools/bench/startup.bench.ts [index-file ...] [--runs N] [--against <tree>] [--no-tiny] [--workers default|1] [--no-phases] [--db fresh|migrated]
 *     (default: $IPINTEL_INDEX, then data/ipintel.idx; a tiny index built from
 *      an empty manifest (IANA tables only) is measured first unless --no-tiny;
 *      --against: also start `bun src/main.ts` of another checkout (the code
 *      before a change), interleaved with this one's; --workers: only that row
 *      (default: both); --no-phases: skip the in-process phase table;
 *      --db migrated: each start on a copy of a database its tree already
 *      migrated, as a restart finds it)
 *
 * Each start uses a fresh empty SQLite file (IPINTEL_DB), as a first start
 * does (unless --db migrated). The index files are in the page cache (the script reads them once
 * first): this is a warm start, not a cold-disk one.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IndexReader } from '../../src/index/reader.ts';
import { hugePageNote } from './lookup-pages.ts';
import { fileSize, freePort, indexPathArg, median, mib, printTable } from './bench-kit.ts';

const args = process.argv.slice(2);
if (args[0] === '--phases') await phasesChild(args[1], args[2]);
const runsAt = args.indexOf('--runs');
const RUNS = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 7;
const againstAt = args.indexOf('--against');
const AGAINST = againstAt >= 0 ? args.splice(againstAt, 2)[1]! : null;
const noTinyAt = args.indexOf('--no-tiny');
const TINY_TOO = noTinyAt < 0;
if (!TINY_TOO) args.splice(noTinyAt, 1);
const workersAt = args.indexOf('--workers');
const ONLY_WORKERS = workersAt >= 0 ? args.splice(workersAt, 2)[1]! : null;
if (ONLY_WORKERS !== null && ONLY_WORKERS !== 'default' && ONLY_WORKERS !== '1') throw new Error('--workers takes default or 1');
const noPhasesAt = args.indexOf('--no-phases');
const PHASES = noPhasesAt < 0;
if (!PHASES) args.splice(noPhasesAt, 1);
const dbAt = args.indexOf('--db');
const DB_MODE = dbAt >= 0 ? args.splice(dbAt, 2)[1]! : 'fresh';
if (DB_MODE !== 'fresh' && DB_MODE !== 'migrated') throw new Error('--db takes fresh or migrated');
const HERE = join(import.meta.dir, '..', '..');
const given = args.length > 0 ? args.map((p) => indexPathArg([p], 0)) : [indexPathArg(process.argv.slice(0, 2))];

const work = mkdtempSync(join(tmpdir(), 'ipintel-startup-'));
const TINY = '/tmp/bench-tiny.idx';
/** Whether a cached tiny index still opens (a format change makes it stale). */
function opens(path: string): boolean {
  try {
    IndexReader.open(path);
    return true;
  } catch {
    return false;
  }
}
if (TINY_TOO && (!existsSync(TINY) || !opens(TINY))) {
  // The smallest valid index: no feeds, only the built-in IANA tables.
  writeFileSync(join(work, 'feeds.json'), '{"sources":[]}');
  const built = Bun.spawnSync(['bun', 'run', 'index-builder/build-command.ts', '--manifest', join(work, 'feeds.json'), '--out', TINY, '--quiet', '--no-defaults']);
  if (built.exitCode !== 0) throw new Error(`tiny index build failed: ${built.stderr}`);
}
const indexes = TINY_TOO ? [TINY, ...given] : given;
for (const p of indexes) readFileSync(p); // into the page cache, so every run starts warm

const BARE = join(work, 'bare-serve.ts');
writeFileSync(
  BARE,
  `Bun.serve({ port: Number(process.env.PORT), hostname: '127.0.0.1', fetch: () => new Response('{"status":"ok"}') });\n`,
);

/** CPU time (user + system, every thread) of a running process so far, ms (Linux; NaN elsewhere). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks, 100 a second
  } catch {
    return NaN;
  }
}

/** The system's load averages, as /proc/loadavg gives them. */
const loadAverage = () => (existsSync('/proc/loadavg') ? readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ') : 'n/a');

/** One start's figures. */
interface Start {
  ms: number;
  cpuMs: number;
}

/** Spawns a server (in `cwd`), polls /health every millisecond, returns ms from spawn to the first 200 and the server's CPU time by then. */
async function timeToFirst200(cmd: string[], env: Record<string, string>, cwd = HERE): Promise<Start> {
  const port = freePort();
  const t0 = Bun.nanoseconds();
  const child = Bun.spawn(cmd, { cwd, env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' }, stdout: 'ignore', stderr: 'pipe' });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${cmd.join(' ')} exited ${child.exitCode}: ${await new Response(child.stderr).text()}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/health`);
        await res.arrayBuffer();
        if (res.status === 200) return { ms: (Bun.nanoseconds() - t0) / 1e6, cpuMs: cpuMs(child.pid) };
      } catch {
        // Not listening yet.
      }
      if ((Bun.nanoseconds() - t0) / 1e9 > 60) throw new Error(`${cmd.join(' ')}: no 200 within 60 s`);
      await Bun.sleep(1);
    }
  } finally {
    child.kill();
    await child.exited;
  }
}

interface Subject {
  name: string;
  /** The index file; null for the bare baseline. */
  path: string | null;
  size: number | null;
  start: () => Promise<Start>;
  samples: Start[];
}
let dbCounter = 0;
const trees: Array<{ label: string; dir: string }> = [{ label: 'this tree', dir: HERE }, ...(AGAINST ? [{ label: AGAINST, dir: AGAINST }] : [])];
/** A database `dir`'s own code migrated once (--db migrated), by tree. */
const migratedDbs = new Map<string, string>();
if (DB_MODE === 'migrated') {
  for (const [i, tree] of trees.entries()) {
    const path = join(work, `migrated-${i}.sqlite`);
    const made = Bun.spawnSync(['bun', '-e', `const s = await (await import('./src/accounts/store.ts')).openAccounts(${JSON.stringify(path)}); await s.close();`], { cwd: tree.dir });
    if (made.exitCode !== 0) throw new Error(`migrating a database in ${tree.dir} failed: ${made.stderr}`);
    migratedDbs.set(tree.dir, path);
  }
}
/** The database file of one start in `dir`: a new name (fresh), or a new copy of the tree's migrated one. */
function startDb(dir: string): string {
  const path = join(work, `db-${dbCounter++}.sqlite`);
  const migrated = migratedDbs.get(dir);
  if (migrated !== undefined) copyFileSync(migrated, path);
  return path;
}
// Blank: the default (the CPUs this process may use), as `bun src/main.ts` starts without IPINTEL_WORKERS.
const workerCounts: Array<{ label: string; value: string }> = [
  { label: 'default workers', value: '' },
  { label: '1 worker', value: '1' },
].filter((w) => ONLY_WORKERS === null || (ONLY_WORKERS === '1') === (w.value === '1'));
const subjects: Subject[] = [
  { name: 'bare Bun.serve (baseline)', path: null, size: null, start: () => timeToFirst200(['bun', 'run', BARE], {}), samples: [] },
  ...indexes.flatMap((path) =>
    workerCounts.flatMap((workers) =>
      trees.map((tree) => ({
        name: `ipintel ${path}, ${workers.label}${AGAINST ? `, ${tree.label}` : ''}`,
        path,
        size: fileSize(path),
        start: () =>
          timeToFirst200(['bun', 'src/main.ts'], { IPINTEL_INDEX: path, IPINTEL_DB: startDb(tree.dir), IPINTEL_WORKERS: workers.value }, tree.dir),
        samples: [] as Start[],
      })),
    ),
  ),
];

/** Whether a tree's worker bundle is current (else its starts load the source): asked of the tree's own code. */
function bundleFresh(dir: string): boolean {
  const asked = Bun.spawnSync(['bun', '-e', "import('./src/host/workers/worker-bundle.ts').then((m) => console.log(m.freshWorkerBundle() ? 'fresh' : 'stale'))"], { cwd: dir });
  return asked.stdout.toString().trim() === 'fresh';
}
const staleBefore = trees.filter((t) => !bundleFresh(t.dir)).map((t) => t.label);

// Interleaved runs, so background load on the shared machine hits every subject alike.
const loadBefore = loadAverage();
for (const s of subjects.slice(1)) await s.start(); // warm-up: bun's transpiler cache for each tree
for (let r = 0; r < RUNS; r++) for (const s of subjects) s.samples.push(await s.start());
const loadAfter = loadAverage();

/**
 * Child mode: where the time to first answer goes, in one fresh process
 * (module loading, services incl. index open + SQLite, listen, first request).
 * Prints one JSON line of cumulative milliseconds since the child started.
 */
async function phasesChild(indexPath: string, dbPath: string): Promise<never> {
  const at: Record<string, number> = { 'process start -> script': performance.now() };
  const mark = (name: string) => (at[name] = performance.now());
  const { loadConfig } = await import('../../src/config.ts');
  const server = await import('../../src/host/start-server.ts');
  mark('import src/host/start-server.ts');
  const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', IPINTEL_INDEX: indexPath, IPINTEL_DB: dbPath });
  const services = await server.createServices(config);
  mark('createServices (index, SQLite, policy)');
  const running = await server.startServer(config, services);
  mark('listening');
  await (await fetch(`${running.url}/health`)).arrayBuffer();
  mark('first /health answered');
  console.log(JSON.stringify(at));
  await running.stop();
  process.exit(0);
}

/** Median cumulative phase times over `runs` fresh child processes. */
async function phases(indexPath: string, runs: number): Promise<Record<string, number>> {
  const all: Record<string, number[]> = {};
  for (let r = 0; r < runs; r++) {
    const child = Bun.spawnSync(['bun', import.meta.path, '--phases', indexPath, join(work, `phase-db-${r}.sqlite`)]);
    const at = JSON.parse(child.stdout.toString().trim()) as Record<string, number>;
    for (const [k, v] of Object.entries(at)) (all[k] ??= []).push(v);
  }
  return Object.fromEntries(Object.entries(all).map(([k, v]) => [k, median(v)]));
}

/** In-process open cost, verified and not, median of 5. */
function openMs(path: string, verifyChecksums: boolean): number {
  const xs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = Bun.nanoseconds();
    IndexReader.open(path, { verifyChecksums });
    xs.push((Bun.nanoseconds() - t0) / 1e6);
  }
  return median(xs);
}

const msOf = (s: Subject) => s.samples.map((x) => x.ms);
const base = median(msOf(subjects[0]));
console.log(`startup: spawn -> first 200 of GET /health, ${RUNS} interleaved runs each (warm page cache; ${DB_MODE === 'fresh' ? 'a fresh database each start' : 'each start on a copy of a migrated database'}); target < 300 ms with the default workers, flat in index size`);
console.log(`load average ${loadBefore} before, ${loadAfter} after`);
// An older tree's key covers all of feeds/, where a start's refresher may download: its later starts then load the source.
const staleAfter = trees.filter((t) => !bundleFresh(t.dir)).map((t) => t.label);
console.log(
  staleBefore.length + staleAfter.length === 0
    ? 'worker bundles: current in every tree before and after the runs\n'
    : `WORKER BUNDLE NOT CURRENT (those starts load the source; bun run bundle there): before ${staleBefore.join(', ') || 'none'}, after ${staleAfter.join(', ') || 'none'}\n`,
);
printTable([
  ['process', 'index size', 'median ms', 'min ms', 'max ms', 'vs bare Bun.serve', 'server CPU ms median (min-max)', 'open() ms verified', 'open() ms unverified'],
  ...subjects.map((s) => [
    s.name,
    s.size === null ? '' : mib(s.size),
    median(msOf(s)).toFixed(0),
    Math.min(...msOf(s)).toFixed(0),
    Math.max(...msOf(s)).toFixed(0),
    `${(median(msOf(s)) / base).toFixed(2)}x`,
    `${median(s.samples.map((x) => x.cpuMs)).toFixed(0)} (${Math.min(...s.samples.map((x) => x.cpuMs)).toFixed(0)}-${Math.max(...s.samples.map((x) => x.cpuMs)).toFixed(0)})`,
    s.path === null ? '' : openMs(s.path, true).toFixed(1),
    s.path === null ? '' : openMs(s.path, false).toFixed(1),
  ]),
]);

// How the page cache holds each index decides much of its check's cost at start (2 MiB folios: fewer faults; see BENCHMARKS.md, Start-up).
for (const p of indexes) {
  const reader = IndexReader.open(p, { verifyChecksums: true });
  console.log(`${p}: ${hugePageNote(p)}`);
  void reader;
}

const phaseTimes: Record<string, number>[] = [];
if (!PHASES) {
  rmSync(work, { recursive: true, force: true });
  process.exit(0);
}
for (const p of indexes) phaseTimes.push(await phases(p, RUNS));
console.log(`\nwhere the time goes (one fresh process per run, cumulative ms since process start, median of ${RUNS}):\n`);
const phaseNames = Object.keys(phaseTimes[0]);
printTable([['phase', ...indexes.map((p) => mib(fileSize(p)))], ...phaseNames.map((name) => [name, ...phaseTimes.map((t) => t[name].toFixed(0))])]);
rmSync(work, { recursive: true, force: true });
