/**
 * HTTP benchmark for issues 3 and 20: wrk on loopback, side by side in one run,
 *   - GET /v1/ip/{ip}           random IPv4 addresses, the full v1 object
 *   - GET /{ip}?format=text     random IPv4 addresses, legacy text
 *   - a bare Bun.serve route    a fixed JSON body of the v1 object's mean size (the baseline)
 *   - a diagnostic row          Bun.serve + lookup + full v1 object without the framework and request path
 *   - with --workers N (default 2; 1 skips them): the same bare route from N threads on one port
 *     (reusePort; also with 1 thread, to see what reusePort alone costs) and both routes of the
 *     server with IPINTEL_WORKERS=N, each row's ratio against the bare row of its own thread count
 * After the runs it prints the servers' memory: RssFile (the mapped index, shared by every
 * worker) and RssAnon (heaps and caches, per worker), and the memory one extra worker costs.
 * Each target is its own process; rounds interleave the targets so machine
 * load drifts hit all of them alike. Prints throughput, p50/p99 and the
 * ratio of each route to the baseline. On a machine shared with other work
 * throughput swings with their load, so it also prints the server's own CPU
 * time per request (utime+stime from /proc, over the requests wrk counted) and
 * that ratio: the throughput ratio the routes would have on a dedicated core.
 *
 *   bun tools/bench/http.bench.ts [--index <file>] [--connections 64] [--duration 8] [--rounds 2] [--workers 2]
 *                                 [--server-cpus 0 --wrk-cpus 1]   (taskset: keep wrk off the servers' cores)
 *
 * Without --index it uses the test fixture index (real snapshots). Needs wrk (apt-get install wrk).
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fixtureIndexPath } from '../../test/helpers/fixture-index.ts';
import { SHARED_FEEDS_DIR } from '../../test/helpers/shared-feeds.ts';
import { median, printTable, procStatus } from './bench-kit.ts';
import { randomIpScript, startTarget, wrk, type Target, type WrkResult } from './http-kit.ts';

interface Args {
  index: string | null;
  connections: number;
  duration: number;
  rounds: number;
  workers: number;
  serverCpus: string | null;
  cpus: string | null;
}

function parseArgs(argv: string[]): Args {
  const out: Args = { index: null, connections: 64, duration: 8, rounds: 2, workers: 2, serverCpus: null, cpus: null };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    if (argv[i] === '--index') (out.index = v), i++;
    else if (argv[i] === '--connections') (out.connections = Number(v)), i++;
    else if (argv[i] === '--duration') (out.duration = Number(v)), i++;
    else if (argv[i] === '--rounds') (out.rounds = Number(v)), i++;
    else if (argv[i] === '--workers') (out.workers = Number(v)), i++;
    else if (argv[i] === '--server-cpus') (out.serverCpus = v ?? null), i++;
    else if (argv[i] === '--wrk-cpus') (out.cpus = v ?? null), i++;
  }
  return out;
}

/** Mean body size of the full v1 object over a sample of random addresses. */
async function meanV1Size(port: number): Promise<number> {
  let total = 0;
  const n = 200;
  let seed = 7;
  const rnd = (k: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) % k);
  for (let i = 0; i < n; i++) {
    const ip = `${1 + rnd(223)}.${rnd(256)}.${rnd(256)}.${1 + rnd(254)}`;
    total += (await (await fetch(`http://127.0.0.1:${port}/v1/ip/${ip}`)).arrayBuffer()).byteLength;
  }
  return Math.round(total / n);
}

/** Proportional file-backed memory of a process (/proc/<pid>/smaps_rollup Pss_File), bytes. */
function pssFile(pid: number): number {
  try {
    const m = /^Pss_File:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Bytes as MiB with one decimal (NaN when /proc did not say). */
const mib1 = (bytes: number | undefined) => ((bytes ?? NaN) / 1048576).toFixed(1);

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const index = args.index ?? (await fixtureIndexPath(SHARED_FEEDS_DIR));
  const targets: Target[] = [];
  const stopAll = () => targets.forEach((t) => t.child.kill('SIGTERM'));
  process.on('exit', stopAll);
  try {
    const cpus = args.serverCpus;
    const ipintel = await startTarget('ipintel', ['ipintel', index], undefined, {}, cpus);
    targets.push(ipintel);
    const size = await meanV1Size(ipintel.port);
    const bare = await startTarget('bare', ['bare', String(size)], undefined, {}, cpus);
    targets.push(bare);
    const direct = await startTarget('direct', ['direct', index], undefined, {}, cpus);
    targets.push(direct);

    const bareRun = { name: 'bare Bun.serve, fixed JSON', pid: bare.child.pid!, port: bare.port, script: randomIpScript('/v1/ip/', '') as string | null, path: '/', baseline: '' };
    bareRun.baseline = bareRun.name;
    const runs = [
      // The baseline gets the same random-path script: wrk's Lua costs CPU on this shared machine, so both sides pay it.
      bareRun,
      { name: 'GET /v1/ip/{ip} (full object)', pid: ipintel.child.pid!, port: ipintel.port, script: randomIpScript('/v1/ip/', ''), path: '/', baseline: bareRun.name },
      { name: 'GET /{ip}?format=text', pid: ipintel.child.pid!, port: ipintel.port, script: randomIpScript('/', '?format=text'), path: '/', baseline: bareRun.name },
      { name: '(diagnostic) Bun.serve + v1 object', pid: direct.child.pid!, port: direct.port, script: randomIpScript('/v1/ip/', ''), path: '/', baseline: bareRun.name },
    ];
    const memoryOf: Array<{ name: string; pid: number }> = [{ name: 'ipintel, 1 worker', pid: ipintel.child.pid! }];
    if (args.workers > 1) {
      const n = args.workers;
      const reuse1 = await startTarget('bare-reuse-1', ['bare-reuse', String(size), '1'], undefined, {}, cpus);
      const reuseN = await startTarget(`bare-reuse-${n}`, ['bare-reuse', String(size), String(n)], undefined, {}, cpus);
      const pool = await startTarget(`ipintel-workers-${n}`, ['ipintel-workers', index, String(n)], undefined, {}, cpus);
      targets.push(reuse1, reuseN, pool);
      const bareN = `bare Bun.serve reusePort, ${n} threads`;
      runs.push(
        { name: 'bare Bun.serve reusePort, 1 thread', pid: reuse1.child.pid!, port: reuse1.port, script: randomIpScript('/v1/ip/', ''), path: '/', baseline: bareRun.name },
        { name: bareN, pid: reuseN.child.pid!, port: reuseN.port, script: randomIpScript('/v1/ip/', ''), path: '/', baseline: bareN },
        { name: `GET /v1/ip/{ip}, ${n} workers`, pid: pool.child.pid!, port: pool.port, script: randomIpScript('/v1/ip/', ''), path: '/', baseline: bareN },
        { name: `GET /{ip}?format=text, ${n} workers`, pid: pool.child.pid!, port: pool.port, script: randomIpScript('/', '?format=text'), path: '/', baseline: bareN },
      );
      memoryOf.push({ name: `ipintel, ${n} workers`, pid: pool.child.pid! });
    }
    // A short warm-up of each (JIT, page cache of the mapped index), not measured.
    for (const r of runs) wrk(`http://127.0.0.1:${r.port}${r.path}`, { ...args, duration: 2 }, r.script, r.pid);

    const results = new Map<string, WrkResult[]>(runs.map((r) => [r.name, []]));
    for (let round = 0; round < args.rounds; round++) {
      for (const r of runs) results.get(r.name)!.push(wrk(`http://127.0.0.1:${r.port}${r.path}`, args, r.script, r.pid));
    }

    const [l1, l5] = loadavg();
    console.log(`index ${index}`);
    console.log(`wrk -t1 -c${args.connections} -d${args.duration}s, ${args.rounds} interleaved rounds (medians shown); baseline body ${size} bytes (mean v1 object size)`);
    if (args.serverCpus || args.cpus) console.log(`servers on CPUs ${args.serverCpus ?? 'any'}, wrk on CPUs ${args.cpus ?? 'any'} (taskset)`);
    console.log(`machine: ${navigator.hardwareConcurrency} cores, load average ${l1.toFixed(2)} / ${l5.toFixed(2)} (1/5 min), shared with other work\n`);
    const rows: (string | number)[][] = [['target', 'req/s', 'x baseline', 'p50 ms', 'p99 ms', 'cpu us/req', 'x baseline (cpu)', 'errors', 'non-2xx', 'baseline']];
    for (const r of runs) {
      const xs = results.get(r.name)!;
      const base = results.get(r.baseline)!;
      const rps = median(xs.map((x) => x.rps));
      rows.push([
        r.name,
        Math.round(rps),
        (rps / median(base.map((x) => x.rps))).toFixed(3),
        median(xs.map((x) => x.p50ms)).toFixed(2),
        median(xs.map((x) => x.p99ms)).toFixed(2),
        median(xs.map((x) => x.cpuUsPerReq)).toFixed(1),
        (median(base.map((x) => x.cpuUsPerReq)) / median(xs.map((x) => x.cpuUsPerReq))).toFixed(3),
        xs.reduce((a, x) => a + x.errors, 0),
        xs.reduce((a, x) => a + x.non2xx, 0),
        r.baseline === r.name ? '-' : r.baseline,
      ]);
    }
    printTable(rows);
    console.log('\nper round (req/s): ' + runs.map((r) => `${r.name.split(' ')[0]}=${results.get(r.name)!.map((x) => Math.round(x.rps)).join('/')}`).join('  '));
    // Each target against its baseline's run of the same round: a drift of the machine between rounds cancels out.
    const paired = runs
      .filter((r) => r.baseline !== r.name)
      .map((r) => {
        const baseRounds = results.get(r.baseline)!;
        const ratios = results.get(r.name)!.map((x, i) => x.rps / baseRounds[i].rps);
        return `${r.name} ${ratios.map((x) => x.toFixed(3)).join('/')} (median ${median(ratios).toFixed(3)})`;
      });
    console.log('per-round ratio to the baseline:\n  ' + paired.join('\n  '));
    // Memory after the load. Each worker maps the index itself, and RssFile counts every mapping, so it
    // doubles with two workers although the page cache holds the file once: Pss_File (pages divided by
    // their mappings) is what the file costs. The heaps (RssAnon) are per worker.
    const mem: (string | number)[][] = [['server', 'RssFile MiB (per mapping)', 'Pss_File MiB (the index, once)', 'RssAnon MiB (heaps)', 'VmRSS MiB']];
    const anon: number[] = [];
    for (const m of memoryOf) {
      const st = procStatus(m.pid);
      anon.push(st.RssAnon ?? NaN);
      mem.push([m.name, mib1(st.RssFile), mib1(pssFile(m.pid)), mib1(st.RssAnon), mib1(st.VmRSS)]);
    }
    console.log('');
    printTable(mem);
    if (anon.length > 1) console.log(`memory per extra worker (RssAnon): ${((anon[1]! - anon[0]!) / 1048576 / (args.workers - 1)).toFixed(1)} MiB`);
  } finally {
    stopAll();
  }
}

await main();
