/**
 * Where a server process's CPU per request goes, thread by thread (issue 35:
 * what a request costs more with 2 workers than with 1). Starts one target
 * (the server with IPINTEL_WORKERS=n, or a bare / floor baseline of n
 * Bun.serve threads on one port), warms it up, then runs wrk rounds and reads
 * every thread's /proc/<pid>/task/<tid>/stat and status before and after each
 * round: user and system CPU µs, minor faults and voluntary / involuntary
 * context switches per request wrk counted, per thread and for the whole
 * process. Threads are named as the kernel names them (Worker, HeapHelper,
 * JITWorker, JSCWarmUp, Bun Pool n, ...); idle ones are left out.
 *
 *   bun tools/bench/http-threads.bench.ts [--workers 2] [--target ipintel|bare|floor] [--route v1|fields]
 *                                         [--rounds 4] [--duration 3] [--warmup 20] [--index f]
 *                                         [--env K=V,K=V] [--server-cpus list] [--wrk-cpus list]
 *
 * The serving threads' CPU split is what each answered (the kernel spreads
 * connections over the reusePort listeners): a proxy for the imbalance.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixtureIndexPath } from '../../test/helpers/fixture-index.ts';
import { SHARED_FEEDS_DIR } from '../../test/helpers/shared-feeds.ts';
import { printTable, usageOf } from './bench-kit.ts';
import { randomIpScript, startTarget, wrk } from './http-kit.ts';

/** One thread's counters as /proc gives them (CPU in clock ticks). */
export interface ThreadCounters {
  name: string;
  user: number;
  system: number;
  minorFaults: number;
  voluntarySwitches: number;
  involuntarySwitches: number;
}

/** Parses a task's `stat` and `status` text (proc(5)); the name may hold spaces and parentheses. */
export function parseThreadCounters(stat: string, status: string): ThreadCounters {
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  const count = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return {
    name: stat.slice(stat.indexOf('(') + 1, close),
    // After the name: state is field 3 of stat(5), so field n is fields[n - 3].
    minorFaults: Number(fields[10 - 3]),
    user: Number(fields[14 - 3]),
    system: Number(fields[15 - 3]),
    voluntarySwitches: count('voluntary_ctxt_switches'),
    involuntarySwitches: count('nonvoluntary_ctxt_switches'),
  };
}

function threadsOf(pid: number): Map<string, ThreadCounters> {
  const out = new Map<string, ThreadCounters>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.set(tid, parseThreadCounters(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'), readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8')));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

const KEYS = ['user', 'system', 'minorFaults', 'voluntarySwitches', 'involuntarySwitches'] as const;

if (import.meta.main) {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(usageOf(import.meta.path));
    process.exit(0);
  }
  const option = (name: string, fallback: string) => {
    const at = argv.indexOf(name);
    return at >= 0 ? argv[at + 1]! : fallback;
  };
  const workers = option('--workers', '2');
  const target = option('--target', 'ipintel');
  const route = option('--route', 'v1');
  const rounds = Number(option('--rounds', '4'));
  const duration = Number(option('--duration', '3'));
  const warmup = Number(option('--warmup', '20'));
  const serverCpus = option('--server-cpus', '') || null;
  const wrkCpus = option('--wrk-cpus', '') || null;
  const env = Object.fromEntries(option('--env', '').split(',').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const index = option('--index', '') || (await fixtureIndexPath(SHARED_FEEDS_DIR));
  // The baselines answer a body of the full object's mean size on the fixture (BENCHMARKS.md, "HTTP lookup route").
  const args = target === 'ipintel' ? ['ipintel-workers', index, workers] : [`${target}-reuse`, '3220', workers];
  const server = await startTarget(target, args, join(import.meta.dir, 'http-target.ts'), env, serverCpus);
  process.on('exit', () => server.child.kill('SIGTERM'));
  const pid = server.child.pid!;
  const url = `http://127.0.0.1:${server.port}/`;
  const script = randomIpScript('/v1/ip/', route === 'fields' ? '?fields=ip,location,network' : '');
  wrk(url, { connections: 64, duration: warmup, cpus: wrkCpus }, script, pid);

  const sums = new Map<string, ThreadCounters>();
  let requests = 0;
  const perRound: string[] = [];
  for (let r = 0; r < rounds; r++) {
    const before = threadsOf(pid);
    const run = wrk(url, { connections: 64, duration, cpus: wrkCpus }, script, pid);
    const after = threadsOf(pid);
    requests += run.requests;
    perRound.push(`${Math.round(run.rps)} req/s ${run.cpuUsPerReq.toFixed(2)} µs`);
    for (const [tid, b] of after) {
      const a = before.get(tid);
      const sum = sums.get(tid) ?? { ...b, user: 0, system: 0, minorFaults: 0, voluntarySwitches: 0, involuntarySwitches: 0 };
      for (const k of KEYS) sum[k] += b[k] - (a?.[k] ?? 0);
      sums.set(tid, sum);
    }
  }
  const ticks = 100; // USER_HZ on Linux
  const us = (t: number) => ((t * 1e6) / ticks / requests).toFixed(2);
  const per = (n: number) => (n / requests).toFixed(4);
  const rows: (string | number)[][] = [['thread', 'tid', 'user µs/req', 'sys µs/req', 'faults/req', 'vol. switches/req', 'invol. switches/req']];
  const total = { user: 0, system: 0, minorFaults: 0, voluntarySwitches: 0, involuntarySwitches: 0 };
  const ordered = [...sums].sort(([, x], [, y]) => y.user + y.system - (x.user + x.system));
  for (const [tid, t] of ordered) {
    for (const k of KEYS) total[k] += t[k];
    if (t.user + t.system === 0 && t.minorFaults === 0 && t.voluntarySwitches + t.involuntarySwitches < requests / 1000) continue;
    rows.push([t.name, tid, us(t.user), us(t.system), per(t.minorFaults), per(t.voluntarySwitches), per(t.involuntarySwitches)]);
  }
  rows.push(['whole process', '', us(total.user), us(total.system), per(total.minorFaults), per(total.voluntarySwitches), per(total.involuntarySwitches)]);
  const serving = ordered.filter(([, t]) => t.name === 'Worker' || t.name === 'bun').map(([, t]) => t.user + t.system);
  const busy = serving.filter((c) => c > 0);
  const busiest = busy.length ? Math.max(...busy) / busy.reduce((a, b) => a + b, 0) : 1;
  console.log(`${target}, ${workers} ${target === 'ipintel' ? 'workers' : 'threads'}, route ${route}${Object.keys(env).length ? `, env ${JSON.stringify(env)}` : ''}; ${warmup} s warm-up, ${rounds} rounds of wrk -t1 -c64 -d${duration}s: ${requests} requests (${perRound.join(', ')})`);
  printTable(rows);
  console.log(`whole process ${us(total.user + total.system)} µs/request; busiest serving thread ${(busiest * 100).toFixed(1)} % of the serving threads' CPU`);
  process.exit(0);
}
