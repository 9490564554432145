/**
 * Build time and peak memory of the embedded default index (DB-IP city mmdb +
 * ASN CSVs + IANA tables), as a child process under GNU time; target under
 * 90 s and under 4 GB on the 2-core machine. Baseline in the same run: a
 * child that only reads the same input files and counts their lines (the
 * floor any builder pays).
 *
 *   bun tools/bench/build.bench.ts [--runs N] [--out file]
 *     (default 1 run; the output goes to a temp file that is deleted, unless --out)
 *
 * Peak memory is reported twice: GNU time's maximum resident set of the
 * largest single process, and the sum over the whole process tree sampled
 * every 100 ms from /proc (counts helper processes, misses spikes < 100 ms).
 * An empty --feeds-dir keeps a local feeds/feeds.json out of the measurement.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageSources } from '../../index-builder/default-sources.ts';
import { fileSize, median, mib, printTable, procStatus, processTree } from './bench-kit.ts';

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const RUNS = Number(option('--runs') ?? 1);
const work = mkdtempSync(join(tmpdir(), 'ipintel-build-bench-'));
const out = option('--out') ?? join(work, 'default.idx');
const emptyFeedsDir = join(work, 'no-feeds');

interface Measured {
  wallS: number;
  cpuS: number;
  maxRssBytes: number;
  treePeakBytes: number;
}

/** Runs a command under /usr/bin/time -v while sampling the RSS of its process tree. */
async function measure(cmd: string[]): Promise<Measured> {
  const child = Bun.spawn(['/usr/bin/time', '-v', ...cmd], { stdout: 'ignore', stderr: 'pipe' });
  const stderr = new Response(child.stderr).text();
  let treePeakBytes = 0;
  const sampler = setInterval(() => {
    let sum = 0;
    // The tree below GNU time itself (time's own few MB are not the builder's).
    for (const pid of processTree(child.pid)) if (pid !== child.pid) sum += procStatus(pid).VmRSS ?? 0;
    treePeakBytes = Math.max(treePeakBytes, sum);
  }, 100);
  const code = await child.exited;
  clearInterval(sampler);
  const text = await stderr;
  if (code !== 0) throw new Error(`${cmd.join(' ')} exited ${code}:\n${text.slice(-2000)}`);
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

const inputs = packageSources().map((s) => s.absPath);
const FLOOR = join(work, 'read-inputs.ts');
writeFileSync(
  FLOOR,
  `let lines = 0;
for (const path of ${JSON.stringify(inputs)}) {
  const bytes = new Uint8Array(await Bun.file(path).arrayBuffer());
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) lines++;
}
console.log(lines);
`,
);
Bun.spawnSync(['mkdir', '-p', emptyFeedsDir]);

const floorRuns: Measured[] = [];
const buildRuns: Measured[] = [];
for (let r = 0; r < RUNS; r++) {
  floorRuns.push(await measure(['bun', 'run', FLOOR]));
  buildRuns.push(await measure(['bun', 'run', 'index-builder/cli.ts', '--default', '--out', out, '--feeds-dir', emptyFeedsDir, '--quiet']));
}

const med = (runs: Measured[], key: keyof Measured) => median(runs.map((m) => m[key]));
const GB = 1e9; // the target is in GB
const row = (name: string, runs: Measured[]) => [
  name,
  med(runs, 'wallS').toFixed(1),
  med(runs, 'cpuS').toFixed(1),
  `${(med(runs, 'maxRssBytes') / GB).toFixed(2)} GB`,
  `${(med(runs, 'treePeakBytes') / GB).toFixed(2)} GB`,
];
console.log(`build of the embedded default (${inputs.length} package inputs + IANA), ${RUNS} run(s); target < 90 s wall and < 4 GB peak\n`);
printTable([
  ['process', 'wall s', 'cpu s', 'peak RSS (time -v)', 'peak tree RSS (sampled)'],
  row('read + count input lines (floor)', floorRuns),
  row('bun run build-index --default', buildRuns),
]);
const build = buildRuns;
console.log(
  `\nbuild / floor wall: ${(med(build, 'wallS') / med(floorRuns, 'wallS')).toFixed(1)}x; ` +
    `vs target: wall ${((100 * med(build, 'wallS')) / 90).toFixed(0)}% of 90 s, peak ${((100 * med(build, 'maxRssBytes')) / 4e9).toFixed(0)}% of 4 GB; ` +
    `output ${out} ${mib(fileSize(out))}` +
    (RUNS > 1 ? `; per run wall s: ${build.map((m) => m.wallS.toFixed(1)).join(', ')}` : ''),
);
rmSync(work, { recursive: true, force: true }); // the scratch (and the output, unless --out put it elsewhere)
