/**
 * A/B of GET /v1/ip/{ip} (random IPv4, full object; `--route fields`: with
 * `?fields=ip,location,network`; `--route text`: GET /{ip}?format=text;
 * `--route json`: GET /{ip}?format=json;
 * `--route asn`: GET /v1/asn/AS<random 16-bit>) between two checkouts or
 * two environments, for changes smaller than this machine's run-to-run noise
 * (±10 %). Both servers run at once and are warmed up; then short wrk runs
 * alternate between them, so a drift in the machine's load hits both alike.
 * Prints each run's server CPU µs/request (from /proc) and the medians, and the
 * throughput (req/s medians and B/A per round).
 *
 *   bun tools/bench/http-ab.ts [--index f] [--rounds 10] [--duration 2] [--connections 64]
 *                              [--a-root dir] [--b-root dir] [--a-env K=V,K=V] [--b-env K=V]
 *                              [--a-index f] [--b-index f] [--route v1|fields|text|json|asn]
 *                              [--workers n | --limits on|off [--b-limits on|off] [--keys n]]
 *                              [--server-cpus list] [--wrk-cpus list]
 *
 * `--server-cpus 0 --wrk-cpus 1` pins both servers and wrk with taskset (1
 * worker): unpinned, a round's CPU per request jumps between two levels as
 * the scheduler puts wrk on the server's core or not.
 * `--workers n` runs each side as a worker pool of n (IPINTEL_WORKERS=n, the
 * `ipintel-workers` target); its CPU is the whole process's, every worker's.
 * `--limits on|off` runs each side with rate limits on or off (memory store,
 * the `ipintel-limits` target: loopback trusted as proxy) and names one of
 * 100 000 anonymous callers in X-Forwarded-For per request; `--b-limits`
 * gives B its own setting (limits on against off in one run, one tree), and
 * `--keys n` sends one of n pro keys per side in X-API-Key, round-robin,
 * instead (keyed callers; the v1 route).
 *
 * `--a-index`/`--b-index` give a side its own index file, for a base that
 * reads an older index format (build it with that checkout's builder).
 *
 * A root is a checkout of this repository (e.g. `git worktree add /tmp/base
 * HEAD~1`, with node_modules linked); the default is this one. Without
 * options it is an A/A run: the spread of the method itself.
 */
import { join } from 'node:path';
import { fixtureIndexPath } from '../../test/helpers/fixture-index.ts';
import { SHARED_FEEDS_DIR } from '../../test/helpers/shared-feeds.ts';
import { median, usageOf } from './bench-kit.ts';
import { apiKeyHeaders, randomAsnScript, randomIpScript, startTarget, wrk, xffHeaders, type Target } from './http-kit.ts';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

interface Side {
  name: string;
  root: string;
  env: Record<string, string>;
  index: string;
}

function parseEnv(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? '').split(',').filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`--a-env/--b-env take K=V pairs separated by commas, got "${pair}"`);
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

function option(argv: string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
}

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  // The usage is this file's header comment, printed rather than running a benchmark.
  console.log(usageOf(import.meta.path));
  process.exit(0);
}
const here = join(import.meta.dir, '..', '..');
const index = option(argv, '--index') ?? (await fixtureIndexPath(SHARED_FEEDS_DIR));
const rounds = Number(option(argv, '--rounds') ?? 10);
// --server-cpus / --wrk-cpus (taskset lists, e.g. 0 and 1): without them the scheduler sometimes puts wrk on the
// server's core and sometimes not, and a round's CPU per request jumps between two levels.
const serverCpus = option(argv, '--server-cpus') ?? null;
const opts = { connections: Number(option(argv, '--connections') ?? 64), duration: Number(option(argv, '--duration') ?? 2), cpus: option(argv, '--wrk-cpus') ?? null };
const sides: Side[] = [
  { name: 'A', root: option(argv, '--a-root') ?? here, env: parseEnv(option(argv, '--a-env')), index: option(argv, '--a-index') ?? index },
  { name: 'B', root: option(argv, '--b-root') ?? here, env: parseEnv(option(argv, '--b-env')), index: option(argv, '--b-index') ?? index },
];

const limits = option(argv, '--limits');
const limitsB = option(argv, '--b-limits') ?? limits;
for (const l of [limits, limitsB]) if (l !== undefined && l !== 'on' && l !== 'off') throw new Error(`--limits and --b-limits are on or off, got "${l}"`);
if (limitsB !== undefined && limits === undefined) throw new Error('--b-limits needs --limits');
const keyCount = Number(option(argv, '--keys') ?? 0);
if (keyCount > 0 && (limits === undefined || (option(argv, '--route') ?? 'v1') !== 'v1')) throw new Error('--keys needs --limits and the v1 route');
// With --limits every request names one of many anonymous callers (each stays under its limit).
const callers = limits === undefined ? null : xffHeaders(100_000);
const SCRIPTS: Record<string, () => string> = {
  v1: () => randomIpScript('/v1/ip/', '', callers),
  fields: () => randomIpScript('/v1/ip/', '?fields=ip,location,network', callers),
  // The legacy one-line text instead of the v1 object.
  text: () => randomIpScript('/', '?format=text', callers),
  // The legacy flat JSON (scored: the operator and its domain).
  json: () => randomIpScript('/', '?format=json', callers),
  asn: randomAsnScript,
};
const route = option(argv, '--route') ?? 'v1';
// B may ask another route of the same code: two routes compared in one run (`--route v1 --b-route fields`).
const routeB = option(argv, '--b-route') ?? route;
for (const r of [route, routeB]) if (!(r in SCRIPTS)) throw new Error(`--route and --b-route are one of ${Object.keys(SCRIPTS).join(', ')}, got "${r}"`);
let scripts = [SCRIPTS[route](), SCRIPTS[routeB]()];
const targets: Target[] = [];
process.on('exit', () => targets.forEach((t) => t.child.kill('SIGTERM')));
const workers = option(argv, '--workers');
if (limits !== undefined && workers !== undefined) throw new Error('--limits and --workers are not combined (the limits target is one worker)');
const keysDir = limits === undefined ? '' : mkdtempSync(join(tmpdir(), 'ipintel-ab-keys-'));
const keysFile = (side: Side) => join(keysDir, `${side.name}.json`);
const targetArgs = (side: Side, i: number) =>
  limits !== undefined ? ['ipintel-limits', side.index, i === 0 ? limits : limitsB!, keysFile(side), String(keyCount)] : workers === undefined ? ['ipintel', side.index] : ['ipintel-workers', side.index, workers];
for (const [i, side] of sides.entries()) targets.push(await startTarget(side.name, targetArgs(side, i), join(side.root, 'tools/bench/http-target.ts'), side.env, serverCpus));
// Keys live in each server's own database: each side is asked with its own.
if (keyCount > 0) scripts = sides.map((side) => randomIpScript('/v1/ip/', '', apiKeyHeaders(JSON.parse(readFileSync(keysFile(side), 'utf8')) as string[])));

const url = (t: Target) => `http://127.0.0.1:${t.port}/`;
// Warm-up: JIT, the page cache of the mapped index, and the body memo filling.
targets.forEach((t, i) => wrk(url(t), { ...opts, duration: 5 }, scripts[i], t.child.pid!));

const cpu: number[][] = [[], []];
// Throughput too: a pause that stalls a worker's connections (a collection waiting for a core) shows in req/s more than in CPU.
const rps: number[][] = [[], []];
// Answers other than 2xx (a 429 would be a cheaper answer): named when any, so such a run is not believed.
const non2xx = [0, 0];
for (let r = 0; r < rounds; r++) {
  targets.forEach((t, i) => {
    const run = wrk(url(t), opts, scripts[i], t.child.pid!);
    cpu[i].push(run.cpuUsPerReq);
    rps[i].push(run.rps);
    non2xx[i] += run.non2xx;
  });
}
console.log(`route ${route === routeB ? route : `A ${route}, B ${routeB}`}${workers === undefined ? '' : `; ${workers} workers`}${limits === undefined ? '' : `; limits ${limits === limitsB ? limits : `A ${limits}, B ${limitsB}`}, ${keyCount > 0 ? `${keyCount} pro keys` : 'X-Forwarded-For callers'}`}; index ${sides.map((s) => s.index).join(' / ')}; ${rounds} alternated rounds of wrk -t1 -c${opts.connections} -d${opts.duration}s; server CPU µs/request`);
sides.forEach((s, i) => {
  const env = Object.entries(s.env).map(([k, v]) => `${k}=${v}`).join(' ');
  console.log(`${s.name} (${s.root}${env ? `, ${env}` : ''}): ${cpu[i].map((x) => x.toFixed(2)).join(' ')}  median ${median(cpu[i]).toFixed(2)}${non2xx[i] > 0 ? `  (${non2xx[i]} non-2xx answers)` : ''}`);
});
const [a, b] = cpu.map(median);
const [ra, rb] = rps.map(median);
const wins = cpu[1].filter((x, i) => x < cpu[0][i]).length;
console.log(`B - A: ${(b - a).toFixed(2)} µs/request (${(((b - a) / a) * 100).toFixed(1)} %); B cheaper in ${wins} of ${rounds} rounds`);
// Per-round ratios: the two sides' runs of a round are back to back, so a drift of the machine's load mostly cancels.
const ratios = rps[1].map((x, i) => x / rps[0][i]);
console.log(`req/s: A median ${Math.round(ra)}, B median ${Math.round(rb)}; B/A per round median ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}), B faster in ${ratios.filter((x) => x > 1).length} of ${rounds} rounds`);
process.exit(0);
