/**
 * Where the time of one index lookup goes: the lookup.bench.ts operation
 * (text -> record -> country code, city, latitude, longitude) cut into
 * cumulative stages, each timed as its own row over the same random
 * addresses. The difference between two rows is the cost of the stage added.
 *
 *   bun tools/bench/lookup-stages.bench.ts [index-file] [--rounds N]
 *
 * Rows are interleaved round by round (a noisy neighbour slows all alike);
 * each has its own compiled loop (see lookup.bench.ts). Stage costs overlap
 * on an out-of-order CPU (the next address's misses start before this one's
 * end), so the differences are marginal costs, not latencies.
 */
import { GEO_PRESENT, RECORD_WIDTH, RecordCol, Section } from '../../src/index/format.ts';
import { u32Section } from '../../src/index/map-index-file.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { parseIPv4, parseIPv6Groups } from '../../src/net/ip.ts';
import { indexPathArg, median, printTable } from './bench-kit.ts';
import { lookupAddresses } from './lookup-addresses.ts';
import { hugePageNote } from './lookup-pages.ts';

const args = process.argv.slice(2);
const roundsAt = args.indexOf('--rounds');
const ROUNDS = roundsAt >= 0 ? Number(args.splice(roundsAt, 2)[1]) : 15;
const indexPath = indexPathArg(['', '', ...args]);
const reader = IndexReader.open(indexPath);
console.log(hugePageNote(indexPath));
const ADDRESSES = 1 << 20;
const BATCH = 1 << 16;
const { v4, v6 } = lookupAddresses(reader, ADDRESSES);
const records = u32Section(reader.file, Section.RECORDS);
const groups = new Uint16Array(8);

type Op = (ip: string) => number;
const len = (s: string | null) => (s === null ? 0 : s.length);
const STAGES: [string, Op][] = [
  ['loop + string touch (floor)', (ip) => ip.length + ip.charCodeAt(ip.length - 1)],
  ['+ parse (net/ip.ts)', (ip) => (ip.indexOf(':') < 0 ? parseIPv4(ip) : parseIPv6Groups(ip, groups) ? groups[7] : -1)],
  ['+ search: recordIdOf', (ip) => reader.recordIdOf(ip)],
  ['+ record row read (raw flags cell)', (ip) => records[reader.recordIdOf(ip) * RECORD_WIDTH + RecordCol.FLAGS]],
  ['+ geo columns read raw (cc, city ids, lat bits)', (ip) => {
    const b = reader.recordIdOf(ip) * RECORD_WIDTH + RecordCol.GEO;
    return records[b] >= GEO_PRESENT ? records[b] + records[b + 2] + records[b + 4] : 0;
  }],
  ['+ record view: record(id).flags', (ip) => reader.record(reader.recordIdOf(ip)).flags],
  ['+ geo object: record(id).geo', (ip) => (reader.record(reader.recordIdOf(ip)).geo === null ? 0 : 1)],
  ['+ its strings read: cc, city, lat, lon', (ip) => {
    const g = reader.record(reader.recordIdOf(ip)).geo;
    return g === null ? 0 : len(g.countryCode) + len(g.city) + (g.latitude ?? 0) + (g.longitude ?? 0);
  }],
  ['= lookup(ip).record.geo (the bench op, with the hit)', (ip) => {
    const g = reader.lookup(ip)!.record.geo;
    return g === null ? 0 : len(g.countryCode) + len(g.city) + (g.latitude ?? 0) + (g.longitude ?? 0);
  }],
];
const freshLoop = () =>
  new Function('op', 'src', 'base', 'n', 'let s = 0; for (let i = 0; i < n; i++) s += op(src[(base + i) & (src.length - 1)]); return s;') as (op: Op, src: string[], base: number, n: number) => number;

let sink = 0;
for (const [label, src] of [['IPv4 (uniform)', v4], ['IPv6 (90% in geolocated intervals)', v6]] as const) {
  const rows = STAGES.map(([name, op]) => ({ name, op, loop: freshLoop(), wall: [] as number[], cpu: [] as number[] }));
  for (const r of rows) for (let k = 0; k < 4; k++) sink += r.loop(r.op, src, k * BATCH, BATCH);
  for (let round = 0; round < ROUNDS; round++) {
    for (const r of rows) {
      const c0 = process.cpuUsage();
      const w0 = Bun.nanoseconds();
      sink += r.loop(r.op, src, round * BATCH, BATCH);
      const w = (Bun.nanoseconds() - w0) / BATCH;
      const c = process.cpuUsage(c0);
      r.wall.push(w);
      r.cpu.push(((c.user + c.system) * 1000) / BATCH);
    }
  }
  console.log(`\n${label}: ${ROUNDS} rounds x ${BATCH.toLocaleString()} lookups per row`);
  let prev = 0;
  printTable([
    ['stage (cumulative)', 'median ns (wall)', 'median ns (cpu)', 'min ns (wall)', 'added (cpu median)'],
    ...rows.map((r, k) => {
      const cpu = median(r.cpu);
      const added = k === 0 || k === rows.length - 1 ? '' : (cpu - prev).toFixed(0);
      if (k < rows.length - 1) prev = cpu;
      return [r.name, median(r.wall).toFixed(0), cpu.toFixed(0), Math.min(...r.wall).toFixed(0), added];
    }),
  ]);
}
console.log(`(load average ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')})`);
if (sink === 42) console.log('');
