/**
 * A serving worker's memory under random-address load, with and without
 * IPINTEL_MEMORY_MB: the real server (tools/bench/http-target.ts, one worker,
 * limits off) answers wrk's random IPv4 addresses, half the time on
 * `/v1/ip/{ip}` and half on `/{ip}?format=text` (both memos fill), while
 * /proc/<pid>/status is sampled every 100 ms. Prints per variant the peak
 * and final RssAnon (heap and caches: what the budget bounds), the peak
 * RssFile (the mapped index, page cache the kernel may drop), and throughput.
 *
 *   bun tools/bench/serving-memory.bench.ts [--index <file>] [--budgets 256,512] [--no-unset] [--duration 15] [--rounds 1] [--connections 64]
 *
 * --pool N: the server as a pool of N worker threads behind a primary
 * (http-target.ts ipintel-workers), the process's RssAnon every thread's.
 *
 * Without --index it uses the fixture index built from the real snapshots
 * (as http.bench.ts). Needs wrk (apt-get install wrk).
 */
import { loadavg } from 'node:os';
import { fixtureIndexPath } from '../../test/helpers/fixture-index.ts';
import { SHARED_FEEDS_DIR } from '../../test/helpers/shared-feeds.ts';
import { median, printTable, procStatus } from './bench-kit.ts';
import { randomIpScript, startTarget, wrk } from './http-kit.ts';

const argv = process.argv.slice(2);
const option = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const index = option('--index') ?? (await fixtureIndexPath(SHARED_FEEDS_DIR));
const budgets = (option('--budgets') ?? '256').split(',').map(Number);
const duration = Number(option('--duration') ?? 15);
const rounds = Number(option('--rounds') ?? 1);
const connections = Number(option('--connections') ?? 64);
const pool = option('--pool');

interface Sample {
  peakAnon: number;
  finalAnon: number;
  peakFile: number;
  rps: number;
}

/**
 * Samples a process's RssAnon and RssFile every 100 ms from a worker thread
 * (wrk runs synchronously on the main thread), keeping the peaks in KiB.
 */
function startSampler(pid: number): { peaks(): { anon: number; file: number }; stop(): void } {
  const peaks = new Int32Array(new SharedArrayBuffer(8));
  const source = `
    const { readFileSync } = require('node:fs');
    self.onmessage = ({ data: { pid, peaks } }) => {
      setInterval(() => {
        let text = '';
        try { text = readFileSync('/proc/' + pid + '/status', 'utf8'); } catch { return; }
        const anon = Number(/^RssAnon:\\s+(\\d+) kB$/m.exec(text)?.[1] ?? 0);
        const file = Number(/^RssFile:\\s+(\\d+) kB$/m.exec(text)?.[1] ?? 0);
        if (anon > Atomics.load(peaks, 0)) Atomics.store(peaks, 0, anon);
        if (file > Atomics.load(peaks, 1)) Atomics.store(peaks, 1, file);
      }, 100);
    };`;
  const worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'application/javascript' })));
  worker.postMessage({ pid, peaks });
  return { peaks: () => ({ anon: Atomics.load(peaks, 0) * 1024, file: Atomics.load(peaks, 1) * 1024 }), stop: () => worker.terminate() };
}

/** One server, loaded for `duration` seconds (two halves, one per route), sampled throughout. */
async function measure(budget: number | null): Promise<Sample> {
  const env: Record<string, string> = budget === null ? {} : { IPINTEL_MEMORY_MB: String(budget) };
  const target = await startTarget(budget === null ? 'unset' : `budget ${budget}`, pool === undefined ? ['ipintel', index] : ['ipintel-workers', index, pool], undefined, env);
  const pid = target.child.pid!;
  const sampler = startSampler(pid);
  try {
    const base = `http://127.0.0.1:${target.port}`;
    const half = { connections, duration: Math.max(1, Math.round(duration / 2)) };
    const rps: number[] = [];
    for (const [prefix, suffix] of [['/v1/ip/', ''], ['/', '?format=text']] as const) rps.push(wrk(base, half, randomIpScript(prefix, suffix), pid).rps);
    await Bun.sleep(300);
    const finalAnon = procStatus(pid).RssAnon ?? NaN;
    const peaks = sampler.peaks();
    return { peakAnon: Math.max(peaks.anon, finalAnon), finalAnon, peakFile: peaks.file, rps: rps.reduce((a, b) => a + b, 0) / rps.length };
  } finally {
    sampler.stop();
    target.child.kill('SIGKILL');
  }
}

const mib = (b: number) => (b / 1048576).toFixed(0);
const [l1, l5] = loadavg();
console.log(`index ${index}${pool === undefined ? '' : `, a pool of ${pool} worker thread(s)`}; ${duration} s of random addresses per server (half v1, half legacy text), ${connections} connections`);
console.log(`machine: ${navigator.hardwareConcurrency} cores, load average ${l1.toFixed(2)} / ${l5.toFixed(2)} (1/5 min), shared with other work\n`);
const variants: (number | null)[] = argv.includes('--no-unset') ? budgets : [null, ...budgets];
const results = new Map<number | null, Sample[]>(variants.map((v) => [v, []]));
for (let r = 0; r < rounds; r++) for (const v of variants) results.get(v)!.push(await measure(v));
const rows: (string | number)[][] = [['IPINTEL_MEMORY_MB', 'peak RssAnon MiB', 'final RssAnon MiB', 'peak RssFile MiB', 'req/s (mean of routes)']];
for (const v of variants) {
  const s = results.get(v)!;
  const spread = (f: (x: Sample) => number) => (s.length > 1 ? `${mib(median(s.map(f)))} (${mib(Math.min(...s.map(f)))}–${mib(Math.max(...s.map(f)))})` : mib(f(s[0])));
  rows.push([v === null ? 'unset' : String(v), spread((x) => x.peakAnon), spread((x) => x.finalAnon), spread((x) => x.peakFile), Math.round(median(s.map((x) => x.rps)))]);
}
printTable(rows);
