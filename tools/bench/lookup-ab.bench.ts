/**
 * Paired A/B of the index lookup in one process: this tree's reader against
 * another tree's (the code before a change), both over the same index file
 * and the same random addresses, batches alternated round by round so the
 * load of the moment falls on both alike. Separate processes on this shared
 * machine differ by 2x from run to run; within a round the two readers differ
 * only by their code.
 *
 *   bun tools/bench/lookup-ab.bench.ts INDEX --base /path/to/other/tree [--base-index FILE] [--rounds N]
 *
 * `--base-index`: the base reader opens its own file (a format change: each
 * tree reads the file its own builder wrote from the same data).
 *
 * Operations (as lookup.bench.ts): `lookup(ip).record.geo` reading country
 * code, city, latitude and longitude, and `recordIdOf` (parse + search).
 * Reported per family and operation: median ns per lookup of each side
 * (wall and CPU), the median of the per-round ratios new / base (wall, and
 * CPU, which a descheduled process does not inflate), and in how many rounds
 * the new code was faster.
 */
import { IndexReader } from '../../src/index/reader.ts';
import { median, printTable } from './bench-kit.ts';
import { lookupAddresses } from './lookup-addresses.ts';
import { hugePageNote } from './lookup-pages.ts';

const args = process.argv.slice(2);
const take = (flag: string): string | undefined => {
  const at = args.indexOf(flag);
  return at >= 0 ? args.splice(at, 2)[1] : undefined;
};
const ROUNDS = Number(take('--rounds') ?? 21);
const baseTree = take('--base');
const baseIndex = take('--base-index');
const indexPath = args[0];
if (!baseTree || !indexPath) throw new Error('usage: lookup-ab.bench.ts INDEX --base TREE [--rounds N]');

type Reader = Pick<IndexReader, 'lookup' | 'recordIdOf'>;
const BaseReader = (await import(`${baseTree}/src/index/reader.ts`)).IndexReader as { open(path: string): Reader };
const sides: [string, Reader][] = [
  ['base', BaseReader.open(baseIndex ?? indexPath)],
  ['new', IndexReader.open(indexPath)],
];
console.log(hugePageNote(indexPath));
if (baseIndex) console.log(`base: ${hugePageNote(baseIndex)}`);
const ADDRESSES = 1 << 20;
const BATCH = 1 << 16;
const { v4, v6 } = lookupAddresses(IndexReader.open(indexPath), ADDRESSES);

type Op = (ip: string) => number;
const len = (s: string | null) => (s === null ? 0 : s.length);
const opsOf = (r: Reader): [string, Op][] => [
  ['lookup(ip).record.geo: cc, city, lat, lon', (ip) => {
    const g = r.lookup(ip)!.record.geo;
    return g === null ? 0 : len(g.countryCode) + len(g.city) + (g.latitude ?? 0) + (g.longitude ?? 0);
  }],
  ['recordIdOf (parse + search)', (ip) => r.recordIdOf(ip)],
];
// A compiled loop per row (see lookup.bench.ts: one shared loop goes megamorphic).
const freshLoop = () =>
  new Function('op', 'src', 'base', 'n', 'let s = 0; for (let i = 0; i < n; i++) s += op(src[(base + i) & (src.length - 1)]); return s;') as (op: Op, src: string[], base: number, n: number) => number;

let sink = 0;
for (const [label, src] of [['IPv4 (uniform)', v4], ['IPv6 (90% in geolocated intervals)', v6]] as const) {
  const rows = sides.flatMap(([side, r]) => opsOf(r).map(([name, op], k) => ({ side, name, k, op, loop: freshLoop(), wall: [] as number[], cpu: [] as number[] })));
  for (const row of rows) for (let w = 0; w < 4; w++) sink += row.loop(row.op, src, w * BATCH, BATCH);
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which side goes first, so neither always follows the other's evictions.
    const order = round % 2 === 0 ? rows : [...rows].reverse();
    for (const [j, row] of order.entries()) {
      // Each batch its own addresses: a row run on the addresses the previous
      // row just looked up would find their lines in cache.
      const from = (round * rows.length + j) * BATCH;
      const c0 = process.cpuUsage();
      const w0 = Bun.nanoseconds();
      sink += row.loop(row.op, src, from, BATCH);
      row.wall.push((Bun.nanoseconds() - w0) / BATCH);
      const c = process.cpuUsage(c0);
      row.cpu.push(((c.user + c.system) * 1000) / BATCH);
    }
  }
  console.log(`\n${label}: ${ROUNDS} rounds x ${BATCH.toLocaleString()} lookups per row`);
  const table = [['operation', 'base ns wall (cpu)', 'new ns wall (cpu)', 'new / base wall, per-round median [min-max]', 'rounds new faster', 'new / base cpu, per-round median [min-max]', 'rounds new faster (cpu)']];
  for (const k of [0, 1]) {
    const [a, b] = [rows.find((r) => r.side === 'base' && r.k === k)!, rows.find((r) => r.side === 'new' && r.k === k)!];
    const ratios = b.wall.map((w, i) => w / a.wall[i]);
    const cpuRatios = b.cpu.map((c, i) => c / a.cpu[i]);
    table.push([
      a.name,
      `${median(a.wall).toFixed(0)} (${median(a.cpu).toFixed(0)})`,
      `${median(b.wall).toFixed(0)} (${median(b.cpu).toFixed(0)})`,
      `${median(ratios).toFixed(3)} [${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)}]`,
      `${ratios.filter((x) => x < 1).length} of ${ROUNDS}`,
      `${median(cpuRatios).toFixed(3)} [${Math.min(...cpuRatios).toFixed(3)}-${Math.max(...cpuRatios).toFixed(3)}]`,
      `${cpuRatios.filter((x) => x < 1).length} of ${ROUNDS}`,
    ]);
  }
  printTable(table);
}
console.log(`(load average ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')})`);
if (sink === 42) console.log('');
