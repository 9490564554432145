/**
 * Issue 21: `bun run lookup --stdin --fields location,network` against the
 * same addresses through the HTTP route (GET /v1/ip/{ip}?fields=location,network
 * on the real server, limits off). Goal: the command answers at least a
 * million addresses a minute on one core.
 *
 *   bun tools/bench/lookup-command.bench.ts [--index <file>] [--count 1000000] [--http-count N] [--connections 32] [--short]
 *
 * Prints, for each side, wall time, addresses a minute by the wall clock and
 * per CPU minute of the answering process (the command; the server, without
 * the load generator), and the ratio command / HTTP. --short: 50 000
 * addresses (a check that the script works; numbers then are noise).
 * Without --index it uses the test fixture index (real snapshots).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fixtureIndexPath } from '../../test/helpers/fixture-index.ts';
import { SHARED_FEEDS_DIR } from '../../test/helpers/shared-feeds.ts';
import { prng } from '../../test/helpers/prng.ts';
import { cpuSeconds, printTable } from './bench-kit.ts';
import { startTarget } from './http-kit.ts';

interface Args {
  index: string | null;
  count: number;
  httpCount: number | null;
  connections: number;
}

function parseArgs(argv: string[]): Args {
  const out: Args = { index: null, count: 1_000_000, httpCount: null, connections: 32 };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    if (argv[i] === '--index') (out.index = v), i++;
    else if (argv[i] === '--count') (out.count = Number(v)), i++;
    else if (argv[i] === '--http-count') (out.httpCount = Number(v)), i++;
    else if (argv[i] === '--connections') (out.connections = Number(v)), i++;
    else if (argv[i] === '--short') out.count = 50_000;
  }
  return out;
}

/** Seeded addresses: nine in ten random IPv4, one in ten IPv6 in announced-looking space. */
function addresses(n: number): string[] {
  const rnd = prng(21);
  const hex = () => Math.floor(rnd() * 65536).toString(16);
  const out: string[] = new Array(n);
  for (let i = 0; i < n; i++) {
    out[i] = i % 10 === 9 ? `2${Math.floor(rnd() * 4)}0${Math.floor(rnd() * 10)}:${hex()}:${hex()}::${hex()}` : `${1 + Math.floor(rnd() * 223)}.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}`;
  }
  return out;
}

interface Side {
  name: string;
  n: number;
  wallS: number;
  cpuS: number;
}

/** The command over a file of addresses, output to /dev/null; CPU time from the child's rusage. */
async function runCommand(index: string, file: string, n: number): Promise<Side> {
  const script = resolve(import.meta.dir, '../lookup.ts');
  const t0 = performance.now();
  const proc = Bun.spawn([process.execPath, script, '--stdin', '--fields', 'location,network', '--index', index], { stdin: Bun.file(file), stdout: Bun.file('/dev/null'), stderr: 'pipe' });
  const err = await new Response(proc.stderr).text();
  const code = await proc.exited;
  const wallS = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`lookup exited with ${code}: ${err.slice(0, 500)}`);
  const usage = proc.resourceUsage()!;
  const cpuS = Number(usage.cpuTime.user + usage.cpuTime.system) / 1e6;
  return { name: 'bun run lookup --stdin', n, wallS, cpuS };
}

/** The same addresses through GET /v1/ip/{ip}?fields=location,network, `connections` requests in flight. */
async function runHttp(index: string, ips: string[], connections: number): Promise<Side> {
  const target = await startTarget('ipintel', ['ipintel', index]);
  try {
    const base = `http://127.0.0.1:${target.port}/v1/ip/`;
    // Warm the route once so start-up work is not counted.
    await (await fetch(`${base}8.8.8.8?fields=location,network`)).text();
    const cpu0 = cpuSeconds(target.child.pid!);
    const t0 = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < ips.length) {
        const ip = ips[next++];
        const res = await fetch(`${base}${ip}?fields=location,network`);
        await res.text();
        if (res.status !== 200) throw new Error(`${ip}: HTTP ${res.status}`);
      }
    };
    await Promise.all(Array.from({ length: connections }, worker));
    const wallS = (performance.now() - t0) / 1000;
    return { name: 'GET /v1/ip/{ip}?fields=location,network', n: ips.length, wallS, cpuS: cpuSeconds(target.child.pid!) - cpu0 };
  } finally {
    target.child.kill('SIGTERM');
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const index = args.index ?? (await fixtureIndexPath(SHARED_FEEDS_DIR));
  const ips = addresses(args.count);
  const dir = mkdtempSync(join(tmpdir(), 'ipintel-lookup-bench-'));
  try {
    const file = join(dir, 'addresses.txt');
    writeFileSync(file, ips.join('\n') + '\n');
    const command = await runCommand(index, file, ips.length);
    const http = await runHttp(index, ips.slice(0, args.httpCount ?? ips.length), args.connections);
    const perMin = (s: Side, seconds: number) => Math.round((s.n / seconds) * 60);
    const rows: (string | number)[][] = [['path', 'addresses', 'wall s', 'per minute (wall)', 'CPU s', 'per CPU minute (one core)']];
    for (const s of [command, http]) rows.push([s.name, s.n, s.wallS.toFixed(2), perMin(s, s.wallS), s.cpuS.toFixed(2), perMin(s, s.cpuS)]);
    console.log(`index ${index}; --fields location,network; ${ips.length} addresses (1 in 10 IPv6); HTTP with ${args.connections} requests in flight`);
    printTable(rows);
    console.log(`ratio command / HTTP: ${(perMin(command, command.wallS) / perMin(http, http.wallS)).toFixed(2)}x by wall clock, ${(perMin(command, command.cpuS) / perMin(http, http.cpuS)).toFixed(2)}x per CPU minute`);
    console.log(`goal >= 1 000 000 a minute on one core: ${perMin(command, command.cpuS) >= 1_000_000 ? 'met' : 'NOT met'} (${perMin(command, command.cpuS)} per CPU minute)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
