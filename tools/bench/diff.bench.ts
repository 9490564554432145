/**
 * `bun run diff` over two indexes: wall time and peak memory of the
 * comparison, each run in its own process (VmHWM is reset by exec, so the
 * peak is the diff's own; the mapped files count in it as they are read).
 * Also the CPU time (the wall time on a shared machine depends on its
 * load) and the anonymous memory at the end (RssAnon: what the diff itself
 * allocated, without the mapped files' pages).
 *
 *   bun tools/bench/diff.bench.ts OLD.idx NEW.idx [--runs N]
 */
import { readFileSync } from 'node:fs';
import { IndexReader } from '../../src/index/reader.ts';
import { diffIndexes } from '../../src/lookup/diff/sweep.ts';
import { median, mib, printTable, quantile } from './bench-kit.ts';

/** A kB line of /proc/self/status, in bytes. */
function status(name: string): number {
  const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

const args = process.argv.slice(2);
if (args[0] === '--child') {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const d = diffIndexes(IndexReader.open(args[1]), IndexReader.open(args[2]));
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu0);
  const cpu = (used.user + used.system) / 1e6;
  Bun.gc(true);
  const changed = d.fields.reduce((n, f) => n + (f.changed.ipv4_addresses > 0 || f.changed.ipv6_64s > 0 ? 1 : 0), 0);
  console.log(JSON.stringify({ seconds, cpu, hwm: status('VmHWM'), anon: status('RssAnon'), changed }));
  process.exit(0);
}

const runsAt = args.indexOf('--runs');
const RUNS = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 3;
const [oldPath, newPath] = args;
if (!oldPath || !newPath) {
  console.error('usage: bun tools/bench/diff.bench.ts OLD.idx NEW.idx [--runs N]');
  process.exit(2);
}
const results: Array<{ seconds: number; cpu: number; hwm: number; anon: number; changed: number }> = [];
for (let i = 0; i < RUNS; i++) {
  const p = Bun.spawnSync(['bun', import.meta.path, '--child', oldPath, newPath], { stderr: 'inherit' });
  if (p.exitCode !== 0) throw new Error(`diff run failed (${p.exitCode})`);
  results.push(JSON.parse(p.stdout.toString()));
}
const sizes = [oldPath, newPath].map((p) => mib(IndexReader.open(p).file.sizeBytes));
console.log(`${oldPath} (${sizes[0]}) vs ${newPath} (${sizes[1]}); ${RUNS} runs; ${new Date().toISOString()}; field groups changed: ${results[0].changed}`);
const col = (f: (r: (typeof results)[number]) => number, fmt: (x: number) => string) => {
  const xs = results.map(f);
  return `${fmt(median(xs))} (${fmt(quantile(xs, 0))}-${fmt(quantile(xs, 1))})`;
};
printTable([
  ['wall s, median (min-max)', 'CPU s (user + sys)', 'peak RSS (VmHWM, with the mapped files)', 'anonymous RSS at the end'],
  [col((r) => r.seconds, (x) => x.toFixed(1)), col((r) => r.cpu, (x) => x.toFixed(1)), col((r) => r.hwm, mib), col((r) => r.anon, mib)],
]);
