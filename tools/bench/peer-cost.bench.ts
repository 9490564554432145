/**
 * What reading the caller's socket address costs per request in Bun: the
 * spec-shaped floor (baseline-servers.ts) against the same floor calling
 * `server.requestIP` per request, as an anonymous caller's rate limit must
 * (its bucket is keyed by the address). Both run pinned to one CPU, wrk to
 * another; short runs alternate so a drift in load hits both alike. Prints
 * each round's server CPU µs per request and the medians; the ratio bounds
 * what "limits on within 10 % of off" can reach for anonymous callers.
 *
 *   bun tools/bench/peer-cost.bench.ts [--rounds 12] [--duration 3] [--server-cpus 0] [--wrk-cpus 1]
 */
import { median } from './bench-kit.ts';
import { randomIpScript, startTarget, wrk, type Target } from './http-kit.ts';

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1]! : fallback;
}

const rounds = Number(option('--rounds', '12'));
const duration = Number(option('--duration', '3'));
const serverCpus = option('--server-cpus', '0');
const wrkCpus = option('--wrk-cpus', '1');
/** The mean v1 full object's size, as http.bench.ts's baselines answer. */
const BODY_BYTES = '3400';

const sides: Target[] = [await startTarget('floor', ['floor', BODY_BYTES], undefined, {}, serverCpus), await startTarget('floor-peer', ['floor-peer', BODY_BYTES], undefined, {}, serverCpus)];
const script = randomIpScript('/v1/ip/', '');
const cpu: Record<string, number[]> = { floor: [], 'floor-peer': [] };
try {
  for (const t of sides) wrk(`http://127.0.0.1:${t.port}`, { connections: 64, duration: 1, cpus: wrkCpus }, script, t.child.pid!);
  console.log(`load average ${(await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')}`);
  for (let r = 0; r < rounds; r++) {
    // Alternate which side goes first, so neither always runs after the other.
    const order = r % 2 === 0 ? sides : [...sides].reverse();
    const line: string[] = [];
    for (const t of order) {
      const res = wrk(`http://127.0.0.1:${t.port}`, { connections: 64, duration, cpus: wrkCpus }, script, t.child.pid!);
      if (res.non2xx > 0 || res.errors > 0) throw new Error(`${t.name}: ${res.non2xx} non-2xx, ${res.errors} socket errors`);
      cpu[t.name]!.push(res.cpuUsPerReq);
      line.push(`${t.name} ${res.cpuUsPerReq.toFixed(2)} µs/req (${Math.round(res.rps)} req/s)`);
    }
    console.log(`round ${r + 1}: ${line.join(', ')}`);
  }
} finally {
  for (const t of sides) t.child.kill('SIGTERM');
}
const a = median(cpu.floor!);
const b = median(cpu['floor-peer']!);
const perRound = cpu.floor!.map((x, i) => cpu['floor-peer']![i]! - x);
console.log(`median CPU per request: floor ${a.toFixed(2)} µs, floor + requestIP ${b.toFixed(2)} µs (+${(b - a).toFixed(2)} µs; per-round difference median ${median(perRound).toFixed(2)} µs, ${perRound.filter((d) => d > 0).length} of ${rounds} rounds dearer)`);
console.log(`floor / floor + requestIP: ${(a / b).toFixed(3)} (by CPU per request)`);
