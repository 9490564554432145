/**
 * What a pulling server downloads per publish, on the full build (every
 * snapshot of ../shared/feeds/feeds.json plus the default data): three builds
 * (the feeds as they are; an hourly-like change, the Tor exit lists churned
 * by 3 %; a daily-like change, every plain-text list churned by 3 %), then
 * for base→hourly and base→daily the compressed copy (Bun's zstd, as the
 * publisher writes it) and a delta by xdelta3 (as the publisher makes it and
 * a puller applies it) and, for comparison, `zstd --long=31 --patch-from`:
 * size, time and peak RSS (GNU time) to make and to apply. Each build and
 * tool is a child under /usr/bin/time. The changed builds follow the base
 * (`--previous`, stable ids) as a publisher's builds follow what it
 * published; `--unhinted` also builds and measures them numbered afresh.
 * Per change, the sections that still differ (section-diff.ts).
 *
 *   bun tools/bench/delta.bench.ts [--keep DIR] [--unhinted]
 */
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sha256OfFile } from '../../src/index/file-sha256.ts';
import { applyDeltaArgv, makeDeltaArgv } from '../../src/index/publish/index-delta.ts';
import { mib, printTable } from './bench-kit.ts';
import { sectionDiff } from './section-diff.ts';

const HERE = resolve(import.meta.dir, '../..');
const FEEDS = resolve(HERE, '../shared/feeds');
const args = process.argv.slice(2);
const keepAt = args.indexOf('--keep');
const unhinted = args.includes('--unhinted');
const work = keepAt >= 0 ? resolve(args[keepAt + 1]!) : mkdtempSync(join(tmpdir(), 'ipintel-delta-bench-'));
const XDELTA3 = Bun.which('xdelta3');
const ZSTD = Bun.which('zstd');
if (!XDELTA3 || !ZSTD) throw new Error('needs xdelta3 and zstd (apt-get install xdelta3 zstd)');

/** Runs argv under GNU time; returns seconds and peak RSS in MiB. */
function timed(argv: string[]): { seconds: number; peakMiB: number } {
  const stats = join(work, 'time.txt');
  const run = Bun.spawnSync(['/usr/bin/time', '-o', stats, '-f', '%e %M', ...argv], { cwd: HERE, stdout: 'ignore', stderr: 'pipe' });
  if (run.exitCode !== 0) throw new Error(`${argv.join(' ')} failed: ${run.stderr.toString().slice(-500)}`);
  const [seconds, kb] = readFileSync(stats, 'utf8').trim().split(/\s+/).slice(-2).map(Number);
  return { seconds: seconds!, peakMiB: kb! / 1024 };
}

/** Every 33rd address line replaced by an address of 45.0.0.0/8 not in the list (a 3 % churn). */
function churnLines(path: string, isAddressLine: (line: string) => boolean, replace: (line: string, n: number) => string | null): number {
  chmodSync(path, 0o644);
  let seen = 0;
  let changed = 0;
  const out = readFileSync(path, 'utf8')
    .split('\n')
    .flatMap((line) => {
      if (!isAddressLine(line) || ++seen % 33 !== 0) return [line];
      changed++;
      const next = replace(line, changed);
      return next === null ? [] : [next];
    });
  writeFileSync(path, out.join('\n'));
  return changed;
}

const newAddress = (n: number) => `45.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

/** A copy of the feeds with the Tor exit lists churned; with `everyList`, every plain-text list too (one line in 33 dropped). */
function churnedFeeds(name: string, everyList: boolean): string {
  const dir = join(work, name);
  cpSync(FEEDS, dir, { recursive: true });
  chmodSync(dir, 0o755);
  let changed = churnLines(join(dir, 'tor/torbulkexitlist'), (l) => /^\d/.test(l), (_l, n) => newAddress(n));
  changed += churnLines(join(dir, 'tor/exit-addresses'), (l) => l.startsWith('ExitAddress '), (l, n) => l.replace(/^ExitAddress \S+/, `ExitAddress ${newAddress(1000 + n)}`));
  if (everyList) {
    const manifest = JSON.parse(readFileSync(join(dir, 'feeds.json'), 'utf8')) as { sources: { path: string }[] };
    for (const s of manifest.sources) {
      if (!/\.(txt|netset|csv)$/.test(s.path)) continue;
      chmodSync(join(dir, s.path, '..'), 0o755);
      changed += churnLines(join(dir, s.path), (l) => /^[0-9a-fA-F]/.test(l), () => null);
    }
  }
  console.error(`${name}: ${changed} lines changed`);
  return join(dir, 'feeds.json');
}

/** Builds the full index from `manifest` into `out` (following `previous`, else numbered afresh), timed. */
function build(manifest: string, out: string, previous?: string) {
  rmSync(out, { force: true });
  const follow = previous ? ['--previous', previous] : ['--no-previous'];
  const t = timed(['bun', 'run', 'src/cli.ts', 'build-index', '--manifest', manifest, '--out', out, ...follow, '--quiet']);
  console.error(`built ${out}: ${mib(statSync(out).size)} in ${t.seconds} s, peak ${t.peakMiB.toFixed(0)} MiB`);
  return t;
}

const base = join(work, 'base.idx');
const builds = { base: build(join(FEEDS, 'feeds.json'), base) } as Record<string, { seconds: number; peakMiB: number }>;
const hourly = churnedFeeds('feeds-hourly', false);
const daily = churnedFeeds('feeds-daily', true);
const changes = [
  { name: 'hourly (Tor exits churned 3 %)', out: join(work, 'hourly.idx'), manifest: hourly, previous: base },
  { name: 'daily (Tor exits and every text list churned 3 %)', out: join(work, 'daily.idx'), manifest: daily, previous: base },
  ...(unhinted
    ? [
        { name: 'hourly, ids afresh', out: join(work, 'hourly-afresh.idx'), manifest: hourly, previous: undefined },
        { name: 'daily, ids afresh', out: join(work, 'daily-afresh.idx'), manifest: daily, previous: undefined },
      ]
    : []),
];
for (const c of changes) builds[c.name] = build(c.manifest, c.out, c.previous);
for (const c of changes) {
  console.log(`\nsections that differ from the base, ${c.name}:`);
  printTable([['section', 'bytes', 'differing', '%'], ...sectionDiff(base, c.out).filter((r) => r.differing > 0).map((r) => [r.tag, r.newBytes, r.differing, ((100 * r.differing) / Math.max(1, r.newBytes)).toFixed(3)])]);
}

const compressScript = join(work, 'compress.ts');
writeFileSync(compressScript, `import { compressIndexFile } from ${JSON.stringify(join(HERE, 'src/index/publish/index-compression.ts'))};\nawait compressIndexFile(process.argv[2], process.argv[3]);\n`);

const size = (p: string) => statSync(p).size;
const rows: (string | number)[][] = [['change', 'way', 'bytes', '% of index', 'make s', 'make peak MiB', 'apply s', 'apply peak MiB', 'result ok']];
for (const c of changes) {
  const full = size(c.out);
  const want = sha256OfFile(c.out);
  const pct = (n: number) => ((100 * n) / full).toFixed(3);
  rows.push([c.name, 'plain', full, '100', '', '', '', '', '']);
  const zst = join(work, 'c.zst');
  rmSync(zst, { force: true });
  const cz = timed(['bun', compressScript, c.out, zst]);
  const dz = timed([ZSTD, '-d', '-q', '-f', zst, '-o', join(work, 'c.out')]);
  rows.push([c.name, 'compressed (zstd -3)', size(zst), pct(size(zst)), cz.seconds, cz.peakMiB.toFixed(0), dz.seconds, dz.peakMiB.toFixed(0), sha256OfFile(join(work, 'c.out')) === want ? 'yes' : 'NO']);
  const xd = join(work, 'd.vcdiff');
  const mx = timed(makeDeltaArgv(XDELTA3, base, c.out, xd));
  const ax = timed(applyDeltaArgv(XDELTA3, base, xd, join(work, 'x.out')));
  rows.push([c.name, 'delta (xdelta3 -B 64 MiB)', size(xd), pct(size(xd)), mx.seconds, mx.peakMiB.toFixed(0), ax.seconds, ax.peakMiB.toFixed(0), sha256OfFile(join(work, 'x.out')) === want ? 'yes' : 'NO']);
  const zd = join(work, 'd.zst');
  const mz = timed([ZSTD, '-q', '-f', '--long=31', `--patch-from=${base}`, c.out, '-o', zd]);
  const az = timed([ZSTD, '-d', '-q', '-f', '--long=31', `--patch-from=${base}`, zd, '-o', join(work, 'z.out')]);
  rows.push([c.name, 'delta (zstd --long=31 --patch-from)', size(zd), pct(size(zd)), mz.seconds, mz.peakMiB.toFixed(0), az.seconds, az.peakMiB.toFixed(0), sha256OfFile(join(work, 'z.out')) === want ? 'yes' : 'NO']);
  for (const f of ['c.out', 'x.out', 'z.out']) rmSync(join(work, f), { force: true });
}
console.log('\nbuilds:');
printTable([['build', 's', 'peak MiB'], ...Object.entries(builds).map(([k, v]) => [k, v.seconds, v.peakMiB.toFixed(0)])]);
console.log('\ntransfers (from the base build):');
printTable(rows);
if (keepAt < 0) rmSync(work, { recursive: true, force: true });
