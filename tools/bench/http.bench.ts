/**
 * HTTP benchmark for issue 3: wrk on loopback, side by side in one run,
 *   - GET /v1/ip/{ip}           random IPv4 addresses, the full v1 object
 *   - GET /{ip}?format=text     random IPv4 addresses, legacy text
 *   - a bare Bun.serve route    a fixed JSON body of the v1 object's mean size (the baseline)
 *   - a diagnostic row          Bun.serve + lookup + full v1 object without the framework and request path
 * Each target is its own process; rounds interleave the targets so machine
 * load drifts hit all of them alike. Prints throughput, p50/p99 and the
 * ratio of each route to the baseline. On a machine shared with other work
 * throughput swings with their load, so it also prints the server's own CPU
 * time per request (utime+stime from /proc, over the requests wrk counted) and
 * that ratio: the throughput ratio the routes would have on a dedicated core.
 *
 *   bun tools/bench/http.bench.ts [--index <file>] [--connections 64] [--duration 8] [--rounds 2]
 *
 * Without --index it uses the test fixture index (real snapshots). Needs wrk (apt-get install wrk).
 */
import { loadavg } from 'node:os';
import { fixtureIndexPath } from '../../test/helpers/fixture-index.ts';
import { median, printTable } from './bench-kit.ts';
import { randomIpScript, startTarget, wrk, type Target, type WrkResult } from './http-kit.ts';

interface Args {
  index: string | null;
  connections: number;
  duration: number;
  rounds: number;
}

function parseArgs(argv: string[]): Args {
  const out: Args = { index: null, connections: 64, duration: 8, rounds: 2 };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    if (argv[i] === '--index') (out.index = v), i++;
    else if (argv[i] === '--connections') (out.connections = Number(v)), i++;
    else if (argv[i] === '--duration') (out.duration = Number(v)), i++;
    else if (argv[i] === '--rounds') (out.rounds = Number(v)), i++;
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

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const index = args.index ?? (await fixtureIndexPath());
  const targets: Target[] = [];
  const stopAll = () => targets.forEach((t) => t.child.kill('SIGTERM'));
  process.on('exit', stopAll);
  try {
    const ipintel = await startTarget('ipintel', ['ipintel', index]);
    targets.push(ipintel);
    const size = await meanV1Size(ipintel.port);
    const bare = await startTarget('bare', ['bare', String(size)]);
    targets.push(bare);
    const direct = await startTarget('direct', ['direct', index]);
    targets.push(direct);

    const runs = [
      // The baseline gets the same random-path script: wrk's Lua costs CPU on this shared machine, so both sides pay it.
      { name: 'bare Bun.serve, fixed JSON', pid: bare.child.pid!, port: bare.port, script: randomIpScript('/v1/ip/', '') as string | null, path: '/' },
      { name: 'GET /v1/ip/{ip} (full object)', pid: ipintel.child.pid!, port: ipintel.port, script: randomIpScript('/v1/ip/', ''), path: '/' },
      { name: 'GET /{ip}?format=text', pid: ipintel.child.pid!, port: ipintel.port, script: randomIpScript('/', '?format=text'), path: '/' },
      { name: '(diagnostic) Bun.serve + v1 object', pid: direct.child.pid!, port: direct.port, script: randomIpScript('/v1/ip/', ''), path: '/' },
    ];
    // A short warm-up of each (JIT, page cache of the mapped index), not measured.
    for (const r of runs) wrk(`http://127.0.0.1:${r.port}${r.path}`, { ...args, duration: 2 }, r.script, r.pid);

    const results = new Map<string, WrkResult[]>(runs.map((r) => [r.name, []]));
    for (let round = 0; round < args.rounds; round++) {
      for (const r of runs) results.get(r.name)!.push(wrk(`http://127.0.0.1:${r.port}${r.path}`, args, r.script, r.pid));
    }

    const [l1, l5] = loadavg();
    console.log(`index ${index}`);
    console.log(`wrk -t1 -c${args.connections} -d${args.duration}s, ${args.rounds} interleaved rounds (medians shown); baseline body ${size} bytes (mean v1 object size)`);
    console.log(`machine: ${navigator.hardwareConcurrency} cores, load average ${l1.toFixed(2)} / ${l5.toFixed(2)} (1/5 min), shared with other work\n`);
    const baseRps = median(results.get(runs[0].name)!.map((x) => x.rps));
    const baseCpu = median(results.get(runs[0].name)!.map((x) => x.cpuUsPerReq));
    const rows: (string | number)[][] = [['target', 'req/s', 'x baseline', 'p50 ms', 'p99 ms', 'cpu us/req', 'x baseline (cpu)', 'errors', 'non-2xx']];
    for (const r of runs) {
      const xs = results.get(r.name)!;
      const rps = median(xs.map((x) => x.rps));
      rows.push([
        r.name,
        Math.round(rps),
        (rps / baseRps).toFixed(3),
        median(xs.map((x) => x.p50ms)).toFixed(2),
        median(xs.map((x) => x.p99ms)).toFixed(2),
        median(xs.map((x) => x.cpuUsPerReq)).toFixed(1),
        (baseCpu / median(xs.map((x) => x.cpuUsPerReq))).toFixed(3),
        xs.reduce((a, x) => a + x.errors, 0),
        xs.reduce((a, x) => a + x.non2xx, 0),
      ]);
    }
    printTable(rows);
    console.log('\nper round (req/s): ' + runs.map((r) => `${r.name.split(' ')[0]}=${results.get(r.name)!.map((x) => Math.round(x.rps)).join('/')}`).join('  '));
    // Each target against the baseline run right before it: a drift of the machine between rounds cancels out.
    const baseRounds = results.get(runs[0].name)!;
    const paired = runs.slice(1).map((r) => {
      const ratios = results.get(r.name)!.map((x, i) => x.rps / baseRounds[i].rps);
      return `${r.name.split(' ')[0]} ${ratios.map((x) => x.toFixed(3)).join('/')} (median ${median(ratios).toFixed(3)})`;
    });
    console.log('per-round ratio to the baseline: ' + paired.join('  '));
  } finally {
    stopAll();
  }
}

await main();
