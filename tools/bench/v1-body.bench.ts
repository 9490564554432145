/**
 * The full v1 body composed from parts (src/lookup/v1-body.ts: the scored part
 * shared per scoring view) against building and serializing it whole, in process: CPU microseconds per body for 60 000 addresses drawn two ways,
 *   uniform — random IPv4 addresses (the worst case for any memo),
 *   skewed  — 20 000 client /24s with Zipf-like popularity, a random host in each,
 * against JSON.stringify(buildV1(...)) of the same hits in the same run.
 *
 *   bun tools/bench/v1-body.bench.ts [index]
 */
import { IndexReader } from '../../src/index/reader.ts';
import { V1BodyCache } from '../../src/lookup/v1-body.ts';
import { buildV1 } from '../../src/lookup/v1.ts';
import { FULL_COVERAGE, loadPolicy } from '../../src/scoring/index.ts';
import { fixtureIndexPath } from '../../test/helpers/fixture-index.ts';
import { SHARED_FEEDS_DIR } from '../../test/helpers/shared-feeds.ts';
import { prng } from '../../test/helpers/prng.ts';
import { printTable } from './bench-kit.ts';

const path = process.argv[2] ?? (await fixtureIndexPath(SHARED_FEEDS_DIR));
const reader = IndexReader.open(path);
const policy = await loadPolicy();
const ctx = { scoring: { verifiedCrawler: null }, policy, rdapOwner: null, now: Date.now() };
const answer = { verifiedCrawler: null, rdapOwner: null, now: ctx.now };
const N = 60_000;

function uniform(seed: number): string[] {
  const rnd = prng(seed);
  const b = () => Math.floor(rnd() * 256);
  return Array.from({ length: N }, () => `${1 + Math.floor(rnd() * 223)}.${b()}.${b()}.${1 + Math.floor(rnd() * 254)}`);
}

function skewed(seed: number): string[] {
  const rnd = prng(seed);
  const b = () => Math.floor(rnd() * 256);
  const nets = Array.from({ length: 20_000 }, () => `${1 + Math.floor(rnd() * 223)}.${b()}.${b()}`);
  const weights = nets.map((_, i) => 1 / (i + 1));
  const total = weights.reduce((a, w) => a + w, 0);
  const cdf: number[] = [];
  let acc = 0;
  for (const w of weights) cdf.push((acc += w / total));
  return Array.from({ length: N }, () => {
    const u = rnd();
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (cdf[m] < u) lo = m + 1;
      else hi = m;
    }
    return `${nets[lo]}.${1 + Math.floor(rnd() * 254)}`;
  });
}

/** CPU microseconds per iteration of f over the N hits. */
function cpuPer(f: () => void): number {
  const c0 = process.cpuUsage();
  f();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / N;
}

const rows: (string | number)[][] = [['addresses', 'distinct records', 'scoring views', 'built each time, us', 'composed, us', 'ratio']];
for (const [name, draw] of [['uniform', uniform], ['skewed', skewed]] as const) {
  const hits = draw(11).map((ip) => reader.lookup(ip)!);
  for (const h of hits.slice(0, 2000)) JSON.stringify(buildV1(h, ctx, null)); // warm-up
  const direct = cpuPer(() => {
    for (const h of hits) JSON.stringify(buildV1(h, ctx, null));
  });
  const cache = new V1BodyCache({ reader, policy, coverage: FULL_COVERAGE });
  const memo = cpuPer(() => {
    for (const h of hits) cache.body(h, answer);
  });
  rows.push([name, new Set(hits.map((h) => h.record)).size, cache.views, direct.toFixed(1), memo.toFixed(1), (direct / memo).toFixed(1)]);
}
console.log(`index ${path}; ${N} addresses each\n`);
printTable(rows);
