/**
 * Time from process start to the first 200 of GET /health, with the index
 * present, for indexes of different sizes (the target is under 300 ms and
 * flat in index size). Baseline in the same run: a bare Bun.serve script
 * started the same way. Also times IndexReader.open in-process (with and
 * without checksum verification) to show where any size dependence comes from.
 *
 *   bun tools/bench/startup.bench.ts [index-file ...] [--runs N]
 *     (default: $IPINTEL_INDEX, then data/ipintel.idx; a tiny index built from
 *      an empty manifest (IANA tables only) is always measured first)
 *
 * Each start uses a fresh empty SQLite file (IPINTEL_DB), as a first start
 * does. The index files are in the page cache (the script reads them once
 * first): this is a warm start, not a cold-disk one.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IndexReader } from '../../src/index/reader.ts';
import { fileSize, freePort, indexPathArg, median, mib, printTable } from './bench-kit.ts';

const args = process.argv.slice(2);
if (args[0] === '--phases') await phasesChild(args[1], args[2]);
const runsAt = args.indexOf('--runs');
const RUNS = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 7;
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
if (!existsSync(TINY) || !opens(TINY)) {
  // The smallest valid index: no feeds, only the built-in IANA tables.
  writeFileSync(join(work, 'feeds.json'), '{"sources":[]}');
  const built = Bun.spawnSync(['bun', 'run', 'index-builder/cli.ts', '--manifest', join(work, 'feeds.json'), '--out', TINY, '--quiet', '--no-defaults']);
  if (built.exitCode !== 0) throw new Error(`tiny index build failed: ${built.stderr}`);
}
const indexes = [TINY, ...given];
for (const p of indexes) readFileSync(p); // into the page cache, so every run starts warm

const BARE = join(work, 'bare-serve.ts');
writeFileSync(
  BARE,
  `Bun.serve({ port: Number(process.env.PORT), hostname: '127.0.0.1', fetch: () => new Response('{"status":"ok"}') });\n`,
);

/** Spawns a server, polls /health every millisecond, returns ms from spawn to the first 200. */
async function timeToFirst200(cmd: string[], env: Record<string, string>): Promise<number> {
  const port = freePort();
  const t0 = Bun.nanoseconds();
  const child = Bun.spawn(cmd, { env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' }, stdout: 'ignore', stderr: 'pipe' });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${cmd.join(' ')} exited ${child.exitCode}: ${await new Response(child.stderr).text()}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/health`);
        await res.arrayBuffer();
        if (res.status === 200) return (Bun.nanoseconds() - t0) / 1e6;
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
  start: () => Promise<number>;
  samples: number[];
}
let dbCounter = 0;
const subjects: Subject[] = [
  { name: 'bare Bun.serve (baseline)', path: null, size: null, start: () => timeToFirst200(['bun', 'run', BARE], {}), samples: [] },
  ...indexes.map((path) => ({
    name: `ipintel ${path}`,
    path,
    size: fileSize(path),
    start: () =>
      timeToFirst200(['bun', 'run', 'src/main.ts'], { IPINTEL_INDEX: path, IPINTEL_DB: join(work, `db-${dbCounter++}.sqlite`) }),
    samples: [] as number[],
  })),
];

// Interleaved runs, so background load on the shared machine hits every subject alike.
await subjects[1].start(); // warm-up: bun's transpiler cache for src/
for (let r = 0; r < RUNS; r++) for (const s of subjects) s.samples.push(await s.start());

/**
 * Child mode: where the time to first answer goes, in one fresh process
 * (module loading, services incl. index open + SQLite, listen, first request).
 * Prints one JSON line of cumulative milliseconds since the child started.
 */
async function phasesChild(indexPath: string, dbPath: string): Promise<never> {
  const at: Record<string, number> = { 'process start -> script': performance.now() };
  const mark = (name: string) => (at[name] = performance.now());
  const { loadConfig } = await import('../../src/config.ts');
  const server = await import('../../src/server.ts');
  mark('import src/server.ts');
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

const base = median(subjects[0].samples);
console.log(`startup: spawn -> first 200 of GET /health, ${RUNS} interleaved runs each (warm page cache); target < 300 ms, flat in index size\n`);
printTable([
  ['process', 'index size', 'median ms', 'min ms', 'max ms', 'vs bare Bun.serve', 'open() ms verified', 'open() ms unverified'],
  ...subjects.map((s) => [
    s.name,
    s.size === null ? '' : mib(s.size),
    median(s.samples).toFixed(0),
    Math.min(...s.samples).toFixed(0),
    Math.max(...s.samples).toFixed(0),
    `${(median(s.samples) / base).toFixed(2)}x`,
    s.path === null ? '' : openMs(s.path, true).toFixed(1),
    s.path === null ? '' : openMs(s.path, false).toFixed(1),
  ]),
]);

const phaseTimes: Record<string, number>[] = [];
for (const p of indexes) phaseTimes.push(await phases(p, RUNS));
console.log(`\nwhere the time goes (one fresh process per run, cumulative ms since process start, median of ${RUNS}):\n`);
const phaseNames = Object.keys(phaseTimes[0]);
printTable([['phase', ...indexes.map((p) => mib(fileSize(p)))], ...phaseNames.map((name) => [name, ...phaseTimes.map((t) => t[name].toFixed(0))])]);
rmSync(work, { recursive: true, force: true });
