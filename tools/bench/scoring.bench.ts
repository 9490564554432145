/**
 * Scoring + decision cost per record, against the bare index lookup measured
 * in the same run. Prints medians per operation and their ratio.
 *
 *   bun tools/bench/scoring.bench.ts [index-file]   (default: $IPINTEL_INDEX or /tmp/full.idx)
 *
 * Build the index first: bun run build-index --manifest ../shared/feeds/feeds.json --out /tmp/full.idx
 */
import { existsSync } from 'node:fs';
import { IndexReader } from '../../src/index/reader.ts';
import type { IndexRecord } from '../../src/index/record.ts';
import { formatIPv4 } from '../../src/net/ip.ts';
import { DEFAULT_POLICY, assessRecord, classify, collectEvidence, computeScore, type ScoringContext } from '../../src/scoring/index.ts';

const path = process.argv[2] ?? process.env.IPINTEL_INDEX ?? '/tmp/full.idx';
if (!existsSync(path)) {
  console.error(`no index at ${path}; build one with: bun run build-index --manifest ../shared/feeds/feeds.json --out ${path}`);
  process.exit(2);
}
const reader = IndexReader.open(path);

// Deterministic address mix: a xorshift stream over IPv4 plus the profile addresses of the tests.
let seed = 0x9e3779b9;
const next = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return seed >>> 0;
};
const PROFILE_IPS = ['171.25.193.25', '104.28.28.1', '3.5.140.10', '66.249.64.5', '1.10.16.1', '73.162.10.20', '10.1.2.3'];
const ips: string[] = [];
for (let i = 0; i < 4096; i++) ips.push(i % 8 === 0 ? PROFILE_IPS[(i >> 3) % PROFILE_IPS.length] : formatIPv4(next()));

const records: IndexRecord[] = ips.map((ip) => reader.lookup(ip)!.record);
const NONE: ScoringContext = { verifiedCrawler: null };
const PROOF: ScoringContext = { verifiedCrawler: { key: 'googlebot', hostname: 'crawl-66-249-64-5.googlebot.com' } };
const ctxs = ips.map((_, i) => (i % 64 === 3 ? PROOF : NONE));

let sink = 0;
interface Timing {
  wall: number;
  cpu: number;
}
/**
 * Median nanoseconds per operation over `rounds` passes of the whole input, as
 * wall time and as this process's CPU time (user + system), which other
 * processes on a shared machine do not inflate.
 */
function measure(name: string, op: (i: number) => unknown, rounds = 41): Timing {
  for (let i = 0; i < ips.length * 3; i++) op(i % ips.length); // warm-up: JIT and caches
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const c0 = process.cpuUsage();
    const t0 = Bun.nanoseconds();
    for (let i = 0; i < ips.length; i++) if (op(i)) sink++;
    const t1 = Bun.nanoseconds();
    const c1 = process.cpuUsage(c0);
    wall.push((t1 - t0) / ips.length);
    cpu.push(((c1.user + c1.system) * 1000) / ips.length);
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1];
  const t = { wall: median(wall), cpu: median(cpu) };
  console.log(`${name.padEnd(34)} wall ${(t.wall / 1000).toFixed(3)} µs/op   cpu ${(t.cpu / 1000).toFixed(3)} µs/op`);
  return t;
}

const ratio = (a: Timing, b: Timing) => `wall ${(a.wall / b.wall).toFixed(2)}   cpu ${(a.cpu / b.cpu).toFixed(2)}`;

console.log(`index ${path}, ${ips.length} addresses, policy ${DEFAULT_POLICY.policy_version}`);
const lookup = measure('bare lookup (baseline)', (i) => reader.lookup(ips[i]));
const scoreOnly = measure('classify + evidence + score', (i) => {
  const c = classify(records[i], ctxs[i]);
  return computeScore(collectEvidence(records[i], c));
});
const full = measure('assessRecord (score + decision)', (i) => assessRecord(records[i], ctxs[i], DEFAULT_POLICY));
const both = measure('lookup + assessRecord', (i) => assessRecord(reader.lookup(ips[i])!.record, ctxs[i], DEFAULT_POLICY));
const serialised = measure('assessRecord + JSON.stringify', (i) => JSON.stringify(assessRecord(records[i], ctxs[i], DEFAULT_POLICY)));

console.log('');
console.log(`ratio score-only / lookup          ${ratio(scoreOnly, lookup)}`);
console.log(`ratio assessRecord / lookup        ${ratio(full, lookup)}`);
console.log(`ratio (lookup + assess) / lookup   ${ratio(both, lookup)}`);
console.log(`ratio (assess + JSON) / lookup     ${ratio(serialised, lookup)}`);
// CPU time includes the engine's concurrent GC threads, so the target is judged on wall time.
console.log(`assessRecord median ${(full.wall / 1000).toFixed(2)} µs wall (target < 5 µs): ${full.wall < 5000 ? 'within' : 'OVER'} target`);
if (sink < 0) console.log(sink);
