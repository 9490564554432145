/**
 * HTTP benchmark for issues 3, 20 and 35: wrk on loopback, side by side in one run,
 *   - GET /v1/ip/{ip}           random IPv4 addresses, the full v1 object
 *   - GET /{ip}?format=text     random IPv4 addresses, legacy text
 *   - GET /v1/ip/{ip}?fields=ip,location,network   the projection
 *   - a diagnostic row          Bun.serve + lookup + full v1 object without the framework and request path
 * against three baselines (tools/bench/baseline-servers.ts, nginx-geoip2.ts):
 *   - bare:   Bun.serve answering a fixed JSON body of the v1 object's mean size (what Bun alone costs)
 *   - floor:  Bun.serve doing what the spec forces on every lookup request and nothing more: reads the
 *             URL and slices the address out of it, reads X-API-Key, answers with ipintel's response
 *             headers and a fresh body string of the same mean size with the address spliced in
 *   - nginx + geoip2 over this project's own MMDB export of the same index (`ipintel export --mmdb`,
 *             made once per index file, about a minute), answering a body shaped like the projection
 *             from the same lookups (how it differs: nginx-geoip2.ts); the projection rows compare to it
 * With --workers N (default 2; 1 skips them): the bare and floor servers from N threads on one port
 * (reusePort; bare also with 1 thread, to see what reusePort alone costs), nginx with N worker
 * processes (listen reuseport) and the server with IPINTEL_WORKERS=N, each against its own count.
 * With --limits: the full object with rate limits on (memory store) against the same server with
 * them off, for anonymous callers (X-Forwarded-For names one of 100 000 IPv4 callers at random,
 * loopback trusted as the proxy, so each caller stays under its limit) and for keyed ones (2000 pro
 * keys in X-API-Key, round-robin); a non-2xx count shows if any caller or key ran out.
 * Each row prints throughput, p50/p99 and its ratios to its baseline, p99 included. After the
 * runs it prints the servers' memory: RssFile (the mapped index, shared by every worker) and
 * RssAnon (heaps and caches, per worker), and the memory one extra worker costs.
 * Each target is its own process; rounds interleave the targets so machine
 * load drifts hit all of them alike. On a machine shared with other work
 * throughput swings with their load, so it also prints the server's own CPU
 * time per request (utime+stime from /proc of the server and its child
 * processes, over the requests wrk counted, including what the server does
 * after the load until it is idle again: the next run waits for that) and
 * that ratio: the throughput ratio the routes would have on a dedicated core.
 *
 *   bun tools/bench/http.bench.ts [--index <file>] [--connections 64] [--duration 8] [--rounds 2] [--workers 2] [--limits]
 *                                 [--server-cpus 0 --wrk-cpus 1]   (taskset: keep wrk off the servers' cores)
 *
 * Without --index it uses the test fixture index (real snapshots). Needs wrk (apt-get install wrk),
 * nginx-light and libnginx-mod-http-geoip2.
 */
import { readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixtureIndexPath } from '../../test/helpers/fixture-index.ts';
import { SHARED_FEEDS_DIR } from '../../test/helpers/shared-feeds.ts';
import { median, printTable, procStatus, usageOf } from './bench-kit.ts';
import { apiKeyHeaders, randomIpScript, startTarget, wrk, xffHeaders, type WrkResult } from './http-kit.ts';
import { mmdbExportOf, startNginx } from './nginx-geoip2.ts';

interface Args {
  index: string | null;
  connections: number;
  duration: number;
  rounds: number;
  workers: number;
  limits: boolean;
  serverCpus: string | null;
  cpus: string | null;
}

function parseArgs(argv: string[]): Args {
  const out: Args = { index: null, connections: 64, duration: 8, rounds: 2, workers: 2, limits: false, serverCpus: null, cpus: null };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    if (argv[i] === '--index') (out.index = v), i++;
    else if (argv[i] === '--connections') (out.connections = Number(v)), i++;
    else if (argv[i] === '--duration') (out.duration = Number(v)), i++;
    else if (argv[i] === '--rounds') (out.rounds = Number(v)), i++;
    else if (argv[i] === '--workers') (out.workers = Number(v)), i++;
    else if (argv[i] === '--limits') out.limits = true;
    else if (argv[i] === '--server-cpus') (out.serverCpus = v ?? null), i++;
    else if (argv[i] === '--wrk-cpus') (out.cpus = v ?? null), i++;
  }
  return out;
}

/** One measured thing: a server (pid: its process, whose children count too) and the wrk script asking it. */
interface Run {
  name: string;
  pid: number;
  port: number;
  script: string;
}

/** A printed row: a run against its baseline run of the same rounds (null: the row is a baseline). */
interface Row {
  run: Run;
  baseline: Run | null;
}

const FIELDS = '?fields=ip,location,network';
/** Pro keys of the keyed limits rows: 600/min each, enough for ~1 M requests over a run of a few minutes. */
const LIMIT_KEYS = 2000;
/** Anonymous callers of the limits rows: each under 60/min up to ~100 000 req/s, and fewer than the memory store's 250 000 buckets. */
const ANONYMOUS_CALLERS = 100_000;

/** Bodies of `GET /v1/ip/<ip><suffix>` for a fixed sample of random addresses (the same for every port). */
async function sampleBodies(port: number, suffix = ''): Promise<string[]> {
  const out: string[] = [];
  let seed = 7;
  const rnd = (k: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) % k);
  for (let i = 0; i < 200; i++) {
    const ip = `${1 + rnd(223)}.${rnd(256)}.${rnd(256)}.${1 + rnd(254)}`;
    out.push(await (await fetch(`http://127.0.0.1:${port}/v1/ip/${ip}${suffix}`)).text());
  }
  return out;
}

/** Mean UTF-8 size of bodies. */
const meanBytes = (bodies: string[]) => Math.round(bodies.reduce((a, b) => a + Buffer.byteLength(b), 0) / bodies.length);

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
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    // The usage is this file's header comment, printed rather than starting a run of several minutes.
    console.log(usageOf(import.meta.path));
    return;
  }
  const args = parseArgs(process.argv.slice(2));
  const index = args.index ?? (await fixtureIndexPath(SHARED_FEEDS_DIR));
  const mmdb = mmdbExportOf(index);
  const stops: Array<() => unknown> = [];
  // On a crash the exit handler can only signal them; the normal end waits for nginx to exit and clean up.
  const stopAll = () => Promise.all(stops.splice(0).map((stop) => stop()));
  process.on('exit', stopAll);
  const cpus = args.serverCpus;
  /** Starts an http-target.ts mode; its runs then ask it with the scripts given. */
  const bunTarget = async (name: string, argv: string[]) => {
    const t = await startTarget(name, argv, undefined, {}, cpus);
    stops.push(() => t.child.kill('SIGTERM'));
    return (runName: string, script: string): Run => ({ name: runName, pid: t.child.pid!, port: t.port, script });
  };
  const nginx = async (workers: number) => {
    const t = await startNginx(`nginx-${workers}`, mmdb, workers, cpus);
    stops.push(t.stop);
    return { name: `nginx + geoip2, ${workers} worker${workers > 1 ? 's' : ''}`, pid: t.child.pid!, port: t.port, script: randomIpScript('/v1/ip/', FIELDS) };
  };
  const v1 = randomIpScript('/v1/ip/', '');
  const text = randomIpScript('/', '?format=text');
  const fields = randomIpScript('/v1/ip/', FIELDS);
  try {
    const ipintelTarget = await bunTarget('ipintel', ['ipintel', index]);
    const full = ipintelTarget('GET /v1/ip/{ip} (full object)', v1);
    const size = meanBytes(await sampleBodies(full.port));
    const fieldsBodies = await sampleBodies(full.port, FIELDS);
    // The baselines get the same random-path script: wrk's Lua costs CPU on this shared machine, so both sides pay it.
    const bare = (await bunTarget('bare', ['bare', String(size)]))('bare Bun.serve, fixed JSON', v1);
    const floor = (await bunTarget('floor', ['floor', String(size)]))('spec floor (Bun.serve)', v1);
    const nginx1 = await nginx(1);
    const nginxBodies = await sampleBodies(nginx1.port, FIELDS);
    const rows: Row[] = [
      { run: bare, baseline: null },
      { run: floor, baseline: bare },
      { run: full, baseline: bare },
      { run: full, baseline: floor },
      { run: ipintelTarget('GET /{ip}?format=text', text), baseline: bare },
      { run: (await bunTarget('direct', ['direct', index]))('(diagnostic) Bun.serve + v1 object', v1), baseline: bare },
      { run: nginx1, baseline: null },
      { run: ipintelTarget(`GET /v1/ip/{ip}${FIELDS}`, fields), baseline: nginx1 },
    ];
    const memoryOf: Array<{ name: string; pid: number }> = [{ name: 'ipintel, 1 worker', pid: full.pid }];
    if (args.workers > 1) {
      const n = args.workers;
      const reuseN = (await bunTarget(`bare-reuse-${n}`, ['bare-reuse', String(size), String(n)]))(`bare Bun.serve reusePort, ${n} threads`, v1);
      const floorN = (await bunTarget(`floor-reuse-${n}`, ['floor-reuse', String(size), String(n)]))(`spec floor, ${n} threads`, v1);
      const pool = await bunTarget(`ipintel-workers-${n}`, ['ipintel-workers', index, String(n)]);
      const fullN = pool(`GET /v1/ip/{ip}, ${n} workers`, v1);
      const nginxN = await nginx(n);
      rows.push(
        { run: (await bunTarget('bare-reuse-1', ['bare-reuse', String(size), '1']))('bare Bun.serve reusePort, 1 thread', v1), baseline: bare },
        { run: reuseN, baseline: null },
        { run: floorN, baseline: reuseN },
        { run: fullN, baseline: reuseN },
        { run: fullN, baseline: floorN },
        { run: pool(`GET /{ip}?format=text, ${n} workers`, text), baseline: reuseN },
        { run: nginxN, baseline: null },
        { run: pool(`GET /v1/ip/{ip}${FIELDS}, ${n} workers`, fields), baseline: nginxN },
      );
      memoryOf.push({ name: `ipintel, ${n} workers`, pid: fullN.pid });
    }
    if (args.limits) {
      const keysFile = (limits: string) => join(tmpdir(), `ipintel-bench-keys-${process.pid}-${limits}.json`);
      const [off, on] = await Promise.all(['off', 'on'].map((limits) => bunTarget(`ipintel-limits-${limits}`, ['ipintel-limits', index, limits, keysFile(limits), String(LIMIT_KEYS)])));
      const keys: string[] = JSON.parse(readFileSync(keysFile('on'), 'utf8'));
      const offKeys: string[] = JSON.parse(readFileSync(keysFile('off'), 'utf8'));
      for (const limits of ['off', 'on']) rmSync(keysFile(limits), { force: true });
      const anonOff = off('full object, anonymous (XFF), limits off', randomIpScript('/v1/ip/', '', xffHeaders(ANONYMOUS_CALLERS)));
      const keyedOff = off('full object, pro keys, limits off', randomIpScript('/v1/ip/', '', apiKeyHeaders(offKeys)));
      rows.push(
        { run: anonOff, baseline: null },
        { run: on('full object, anonymous (XFF), limits on', randomIpScript('/v1/ip/', '', xffHeaders(ANONYMOUS_CALLERS))), baseline: anonOff },
        { run: keyedOff, baseline: null },
        { run: on('full object, pro keys, limits on', randomIpScript('/v1/ip/', '', apiKeyHeaders(keys))), baseline: keyedOff },
      );
    }
    const runs = [...new Set(rows.map((r) => r.run))];
    // A short warm-up of each (JIT, page cache of the mapped index), not measured.
    const measure = (r: Run, duration: number) => wrk(`http://127.0.0.1:${r.port}/`, { ...args, duration, serverTree: true }, r.script, r.pid);
    for (const r of runs) measure(r, 2);
    const results = new Map<Run, WrkResult[]>(runs.map((r) => [r, []]));
    for (let round = 0; round < args.rounds; round++) for (const r of runs) results.get(r)!.push(measure(r, args.duration));

    const [l1, l5] = loadavg();
    console.log(`index ${index}\nMMDB export ${mmdb}`);
    console.log(`wrk -t1 -c${args.connections} -d${args.duration}s, ${args.rounds} interleaved rounds (medians shown)`);
    console.log(`mean body bytes: full object ${size} (the bare and floor bodies), projection ${meanBytes(fieldsBodies)} from ipintel, ${meanBytes(nginxBodies)} from nginx`);
    console.log(`nginx's bodies byte-identical to ipintel's projection: ${nginxBodies.filter((b, i) => b === fieldsBodies[i]).length} of ${nginxBodies.length} sampled addresses`);
    if (args.serverCpus || args.cpus) console.log(`servers on CPUs ${args.serverCpus ?? 'any'}, wrk on CPUs ${args.cpus ?? 'any'} (taskset)`);
    console.log(`machine: ${navigator.hardwareConcurrency} cores, load average ${l1.toFixed(2)} / ${l5.toFixed(2)} (1/5 min), shared with other work\n`);
    printTable(resultTable(rows, results));
    console.log('\nper round (req/s):\n  ' + runs.map((r) => `${r.name}: ${results.get(r)!.map((x) => Math.round(x.rps)).join('/')}`).join('\n  '));
    // Each row against its baseline's run of the same round: a drift of the machine between rounds cancels out.
    const paired = rows
      .filter((r) => r.baseline !== null)
      .map(({ run, baseline }) => {
        const baseRounds = results.get(baseline!)!;
        const ratios = results.get(run)!.map((x, i) => x.rps / baseRounds[i].rps);
        return `${run.name} / ${baseline!.name}: ${ratios.map((x) => x.toFixed(3)).join('/')} (median ${median(ratios).toFixed(3)})`;
      });
    console.log('per-round ratio to the baseline:\n  ' + paired.join('\n  '));
    printMemory(memoryOf, args.workers);
  } finally {
    await stopAll();
  }
}

/** The result table: medians of each row's run and its ratios to its baseline's (throughput, p99, CPU per request). */
function resultTable(rows: Row[], results: Map<Run, WrkResult[]>): (string | number)[][] {
  const table: (string | number)[][] = [['target', 'req/s', 'x baseline', 'p50 ms', 'p99 ms', 'p99 x baseline', 'cpu us/req', 'x baseline (cpu)', 'errors', 'non-2xx', 'baseline']];
  for (const { run, baseline } of rows) {
    const xs = results.get(run)!;
    const base = results.get(baseline ?? run)!;
    const med = (rs: WrkResult[], f: (x: WrkResult) => number) => median(rs.map(f));
    const ratio = (x: number) => (baseline ? x.toFixed(3) : '-');
    table.push([
      run.name,
      Math.round(med(xs, (x) => x.rps)),
      ratio(med(xs, (x) => x.rps) / med(base, (x) => x.rps)),
      med(xs, (x) => x.p50ms).toFixed(2),
      med(xs, (x) => x.p99ms).toFixed(2),
      ratio(med(xs, (x) => x.p99ms) / med(base, (x) => x.p99ms)),
      med(xs, (x) => x.cpuUsPerReq).toFixed(1),
      ratio(med(base, (x) => x.cpuUsPerReq) / med(xs, (x) => x.cpuUsPerReq)),
      xs.reduce((a, x) => a + x.errors, 0),
      xs.reduce((a, x) => a + x.non2xx, 0),
      baseline?.name ?? '-',
    ]);
  }
  return table;
}

/**
 * Memory after the load. Each worker maps the index itself, and RssFile counts every mapping, so it
 * doubles with two workers although the page cache holds the file once: Pss_File (pages divided by
 * their mappings) is what the file costs. The heaps (RssAnon) are per worker.
 */
function printMemory(memoryOf: Array<{ name: string; pid: number }>, workers: number): void {
  const mem: (string | number)[][] = [['server', 'RssFile MiB (per mapping)', 'Pss_File MiB (the index, once)', 'RssAnon MiB (heaps)', 'VmRSS MiB']];
  const anon: number[] = [];
  for (const m of memoryOf) {
    const st = procStatus(m.pid);
    anon.push(st.RssAnon ?? NaN);
    mem.push([m.name, mib1(st.RssFile), mib1(pssFile(m.pid)), mib1(st.RssAnon), mib1(st.VmRSS)]);
  }
  console.log('');
  printTable(mem);
  if (anon.length > 1) console.log(`memory per extra worker (RssAnon): ${((anon[1]! - anon[0]!) / 1048576 / (workers - 1)).toFixed(1)} MiB`);
}

await main();
