/**
 * Build time and peak memory of the index builder, each build a child
 * process under GNU time: the embedded default (data packages + IANA tables)
 * and the full build (the default data plus every snapshot of
 * ../shared/feeds/feeds.json, what the feed refresher builds). Targets: peak
 * RSS at most 768 MiB (default) and 1 024 MiB (full); build time at most
 * +25 % of the baseline's.
 *
 *   bun tools/bench/build.bench.ts [--runs N] [--base DIR] [--only default|full] [--manifest FILE]
 *
 * --base DIR: a checkout of the builder to compare with (a git worktree of
 * the commit before the change, with its own `bun install`); its builds run
 * in the same rounds, interleaved with this checkout's, and their sections are
 * compared (XXH3 per section from the directory, META aside). Without it,
 * the baseline is a child that only reads the default's input files and
 * counts their lines (the floor any builder pays).
 *
 * Peak memory is reported twice: GNU time's maximum resident set of the
 * largest single process, and the sum over the whole process tree sampled
 * every 100 ms from /proc (counts helper processes, misses spikes < 100 ms).
 * An empty --feeds-dir keeps a local feeds/feeds.json out of the default.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { packageSources } from '../../index-builder/default-sources.ts';
import { sectionHashes } from '../../index-builder/write/section-hashes.ts';
import { median, printTable, procStatus, processTree } from './bench-kit.ts';

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const RUNS = Number(option('--runs') ?? 3);
const HERE = resolve(import.meta.dir, '../..');
const BASE = option('--base') ? resolve(option('--base')!) : undefined;
const MANIFEST = resolve(option('--manifest') ?? join(HERE, '../shared/feeds/feeds.json'));
const KINDS = (option('--only') ? [option('--only')!] : ['default', 'full']) as ('default' | 'full')[];
const TARGET_MIB = { default: 768, full: 1024 };
const work = mkdtempSync(join(tmpdir(), 'ipintel-build-bench-'));
const emptyFeedsDir = join(work, 'no-feeds');
mkdirSync(emptyFeedsDir);

interface Measured {
  wallS: number;
  cpuS: number;
  maxRssBytes: number;
  treePeakBytes: number;
}

let measured = 0;

/** Runs a command under /usr/bin/time -v while sampling the RSS of its process tree. */
async function measure(cmd: string[], cwd: string): Promise<Measured> {
  // GNU time reports into a file of its own: on the pipe the bench reads, its byte-by-byte report
  // could arrive cut short, and GNU time then exited 1 although the build had exited 0.
  const report = join(work, `time-${++measured}.txt`);
  const child = Bun.spawn(['/usr/bin/time', '-v', '-o', report, ...cmd], { cwd, stdout: 'pipe', stderr: 'pipe' });
  const stderr = new Response(child.stderr).text();
  const stdout = new Response(child.stdout).text();
  let treePeakBytes = 0;
  const sampler = setInterval(() => {
    let sum = 0;
    // The tree below GNU time itself (time's own few MB are not the builder's).
    for (const pid of processTree(child.pid)) if (pid !== child.pid) sum += procStatus(pid).VmRSS ?? 0;
    treePeakBytes = Math.max(treePeakBytes, sum);
  }, 100);
  const code = await child.exited;
  clearInterval(sampler);
  const builderStderr = await stderr;
  await stdout;
  const text = existsSync(report) ? readFileSync(report, 'utf8') : '';
  if (code !== 0) throw new Error(`${cmd.join(' ')} (in ${cwd}) exited ${code}: ${builderStderr.slice(-2000)}${text.split('\tCommand being timed')[0]}`);
  const field = (label: string) => {
    const m = text.match(new RegExp(`${label}: (.+)`));
    if (!m) throw new Error(`no "${label}" in GNU time output`);
    return m[1].trim();
  };
  const wall = field('Elapsed \\(wall clock\\) time \\(h:mm:ss or m:ss\\)')
    .split(':')
    .reduce((acc, part) => acc * 60 + Number(part), 0);
  return {
    wallS: wall,
    cpuS: Number(field('User time \\(seconds\\)')) + Number(field('System time \\(seconds\\)')),
    maxRssBytes: Number(field('Maximum resident set size \\(kbytes\\)')) * 1024,
    treePeakBytes,
  };
}

/** The builder's command for a kind of build, writing `out`. */
function buildCommand(kind: 'default' | 'full', out: string): string[] {
  const what = kind === 'default' ? ['--default', '--feeds-dir', emptyFeedsDir] : ['--manifest', MANIFEST];
  return ['bun', 'run', 'index-builder/build-command.ts', ...what, '--out', out, '--quiet'];
}

const FLOOR = join(work, 'read-inputs.ts');
writeFileSync(
  FLOOR,
  `let lines = 0;
for (const path of ${JSON.stringify(packageSources().map((s) => s.absPath))}) {
  const bytes = new Uint8Array(await Bun.file(path).arrayBuffer());
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) lines++;
}
console.log(lines);
`,
);

const runs = new Map<string, Measured[]>();
const record = (key: string, m: Measured) => runs.set(key, [...(runs.get(key) ?? []), m]);
const sectionsEqual: Record<string, boolean[]> = {};
const failures: Record<string, number> = {};
for (let r = 0; r < RUNS; r++) {
  if (!BASE) record('floor', await measure(['bun', 'run', FLOOR], HERE));
  for (const kind of KINDS) {
    const out = join(work, `${kind}.idx`);
    // Alternating which builder goes first spreads the machine's drift over both.
    const order = BASE ? (r % 2 === 0 ? [BASE, HERE] : [HERE, BASE]) : [HERE];
    for (const dir of order) {
      const file = dir === HERE ? out : join(work, `${kind}-base.idx`);
      rmSync(file, { force: true });
      console.error(`run ${r + 1}/${RUNS}: ${kind} build, ${dir === HERE ? 'this checkout' : 'base'}`);
      const key = `${kind}:${dir === HERE ? 'new' : 'base'}`;
      try {
        record(key, await measure(buildCommand(kind, file), dir));
      } catch (e) {
        // A failed build is reported and counted, not measured; the other runs go on.
        console.error(`FAILED: ${(e as Error).message}`);
        failures[key] = (failures[key] ?? 0) + 1;
      }
    }
    if (BASE && existsSync(out) && existsSync(join(work, `${kind}-base.idx`))) {
      const a = sectionHashes(out);
      const b = sectionHashes(join(work, `${kind}-base.idx`));
      delete a.META;
      delete b.META;
      // By tag: the two builders may lay the sections out in different orders.
      const tags = new Set([...Object.keys(a), ...Object.keys(b)]);
      (sectionsEqual[kind] ??= []).push([...tags].every((t) => a[t]?.xxh3 === b[t]?.xxh3 && a[t]?.bytes === b[t]?.bytes));
    }
  }
}

const MiB = 1048576;
const spread = (xs: number[], f: (x: number) => string) => (xs.length > 1 ? ` (${f(Math.min(...xs))}–${f(Math.max(...xs))})` : '');
const row = (name: string, key: string, target?: number): (string | number)[] => {
  const ms = runs.get(key) ?? [];
  if (ms.length === 0) return [name, 'failed', '', '', '', ''];
  const wall = ms.map((m) => m.wallS);
  const peak = ms.map((m) => m.maxRssBytes / MiB);
  const within = target === undefined ? '' : `${peak.filter((p) => p <= target).length}/${peak.length}`;
  return [
    name,
    `${median(wall).toFixed(1)}${spread(wall, (x) => x.toFixed(1))}`,
    median(ms.map((m) => m.cpuS)).toFixed(1),
    `${median(peak).toFixed(0)}${spread(peak, (x) => x.toFixed(0))}`,
    (median(ms.map((m) => m.treePeakBytes)) / MiB).toFixed(0),
    within,
  ];
};
console.log(`index builds, ${RUNS} run(s) each, medians (min–max); ${BASE ? `baseline: ${BASE}` : 'baseline: reading the inputs'}\n`);
const table: (string | number)[][] = [['build', 'wall s', 'cpu s', 'peak RSS MiB (time -v)', 'peak tree RSS MiB (sampled)', 'within target']];
if (!BASE) table.push(row('read + count the default inputs (floor)', 'floor'));
for (const kind of KINDS) {
  if (BASE) table.push(row(`${kind}: base builder`, `${kind}:base`));
  table.push(row(`${kind}: this builder (target ${TARGET_MIB[kind]} MiB)`, `${kind}:new`, TARGET_MIB[kind]));
}
printTable(table);
if (BASE) {
  for (const kind of KINDS) {
    const n = runs.get(`${kind}:new`) ?? [];
    const b = runs.get(`${kind}:base`) ?? [];
    if (n.length === 0 || b.length === 0) continue;
    const ratio = (k: keyof Measured) => (median(n.map((m) => m[k])) / median(b.map((m) => m[k]))).toFixed(2);
    console.log(
      `${kind}: this/base wall ${ratio('wallS')}x, cpu ${ratio('cpuS')}x, peak RSS ${ratio('maxRssBytes')}x; ` +
        `sections equal to the base's in ${(sectionsEqual[kind] ?? []).filter(Boolean).length}/${(sectionsEqual[kind] ?? []).length} runs`,
    );
  }
}
const failed = Object.entries(failures);
if (failed.length) console.log(`failed builds (not in the medians): ${failed.map(([k, n]) => `${k} ${n}`).join(', ')}`);
rmSync(work, { recursive: true, force: true });
