/**
 * Lookup cost with operator overrides (issue 31): the index lookup alone
 * (the baseline), and the one lookup of the pipeline (lookupAddress) with
 * 0, 10 000 and 1 000 000 overrides; plus what a table of each size costs
 * to load (CSV parse + build, through the server's OverridesHolder) and to
 * hold (typed arrays, heap).
 *
 *   bun tools/bench/overrides.bench.ts [index-file] [--rounds N]
 *
 * Overrides: random IPv4 /24s and /32s and IPv6 /48s and /64s (half each
 * family), a country code, and a note drawn from 1 000 texts (so notes
 * repeat as an operator's would). Addresses: 2^20 per family, IPv4 uniform,
 * IPv6 uniform in 2a00::/12 where the IPv6 overrides are, strings made
 * before timing. Each round times one batch of every variant back to back
 * (interleaved: a noisy neighbour slows all alike); reported are median
 * wall ns per lookup over the rounds, and the ratio to the baseline of the
 * same round. Each lookup reads the record's country code (an overridden
 * hit builds its overlaid record).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IndexReader } from '../../src/index/reader.ts';
import { OverridesHolder } from '../../src/lookup/overrides/holder.ts';
import { lookupAddress } from '../../src/lookup/overrides/overlay.ts';
import { OverrideTable } from '../../src/lookup/overrides/table.ts';
import { formatIPv4, formatIPv6Groups } from '../../src/net/ip.ts';
import { indexPathArg, median, mib, printTable, quantile, xorshift32 } from './bench-kit.ts';

/** A kB line of /proc/self/status, in bytes. */
function status(name: string): number {
  const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

const args = process.argv.slice(2);
if (args[0] === '--load') {
  // A process that only loads the file: its peak (VmHWM, reset by exec) is the load's own.
  const base = status('VmHWM');
  const holder = OverridesHolder.open(args[1], () => {});
  Bun.gc(true);
  console.log(JSON.stringify({ entries: holder.current.size, peak: status('VmHWM') - base, anon: status('RssAnon') }));
  process.exit(0);
}
const roundsAt = args.indexOf('--rounds');
const ROUNDS = roundsAt >= 0 ? Number(args.splice(roundsAt, 2)[1]) : 11;
const indexPath = indexPathArg(['', '', ...args]);
const ADDRESSES = 1 << 20;
const BATCH = 1 << 16;
const SIZES = [0, 10_000, 1_000_000];

const rand = xorshift32(31);
const v6Text = (top16: number, rest: () => number) => formatIPv6Groups([top16, rest() & 0xffff, rest() & 0xffff, rest() & 0xffff, rest() & 0xffff, rest() & 0xffff, rest() & 0xffff, rest() & 0xffff]);
const randomV6 = () => v6Text(0x2a00 | (rand() & 0xf), rand);

/** An overrides file of n entries (CSV), as an operator would write it. */
function overridesCsv(n: number): string {
  const lines = ['cidr,country_code,note'];
  for (let i = 0; i < n; i++) {
    const note = `site ${i % 1000}`;
    if (i % 2 === 0) lines.push(`${formatIPv4(rand() >>> 0)}/${i % 4 === 0 ? 24 : 32},DE,${note}`);
    else lines.push(`${randomV6()}/${i % 4 === 1 ? 48 : 64},DE,${note}`);
  }
  return `${lines.join('\n')}\n`;
}

const heap = () => {
  Bun.gc(true);
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

const reader = IndexReader.open(indexPath);
const dir = mkdtempSync(join(tmpdir(), 'ipintel-overrides-bench-'));
const tables: Array<{ name: string; table: OverrideTable }> = [];
const loadRows: (string | number)[][] = [['overrides', 'file', 'load (parse + build)', 'typed arrays', 'heap + buffers held', 'field sets', 'peak of a load alone (VmHWM rise)']];
for (const n of SIZES) {
  const path = join(dir, `o${n}.csv`);
  const csv = overridesCsv(n);
  writeFileSync(path, csv);
  const before = heap();
  const t0 = performance.now();
  const holder = n === 0 ? null : OverridesHolder.open(path, () => {});
  const ms = performance.now() - t0;
  const table = holder?.current ?? OverrideTable.EMPTY;
  const held = heap() - before;
  const alone = n === 0 ? null : JSON.parse(Bun.spawnSync(['bun', import.meta.path, '--load', path]).stdout.toString()) as { peak: number };
  tables.push({ name: `lookupAddress, ${n.toLocaleString('en-US')} overrides`, table });
  loadRows.push([n.toLocaleString('en-US'), mib(csv.length), n === 0 ? '-' : `${Math.round(ms)} ms`, mib(table.byteLength), mib(Math.max(0, held)), table.fieldSetCount, alone ? mib(alone.peak) : '-']);
}
rmSync(dir, { recursive: true, force: true });

const v4 = Array.from({ length: ADDRESSES }, () => formatIPv4(rand() >>> 0));
const v6 = Array.from({ length: ADDRESSES }, randomV6);

let sink = 0;
/** One timed batch; each variant gets its own loop (one shared loop would make the call site megamorphic). */
function baseline(ips: string[], from: number): number {
  const t = Bun.nanoseconds();
  for (let i = from; i < from + BATCH; i++) sink += reader.lookup(ips[i])!.record.geo?.countryCode?.length ?? 0;
  return (Bun.nanoseconds() - t) / BATCH;
}
function piped(ips: string[], from: number, table: OverrideTable): number {
  const t = Bun.nanoseconds();
  for (let i = from; i < from + BATCH; i++) sink += lookupAddress(reader, table, ips[i])!.record.geo?.countryCode?.length ?? 0;
  return (Bun.nanoseconds() - t) / BATCH;
}

const hits = tables.map(({ table }) => [v4, v6].map((ips) => ips.filter((ip) => table.find(ip) !== null).length / ips.length));
const results = new Map<string, { v4: number[]; v6: number[]; r4: number[]; r6: number[] }>();
for (const name of ['index lookup alone (baseline)', ...tables.map((t) => t.name)]) results.set(name, { v4: [], v6: [], r4: [], r6: [] });
for (let round = 0; round < ROUNDS; round++) {
  const from = (round * BATCH) % (ADDRESSES - BATCH);
  for (const [family, ips] of [['v4', v4], ['v6', v6]] as const) {
    const base = baseline(ips, from);
    results.get('index lookup alone (baseline)')![family].push(base);
    for (const { name, table } of tables) {
      const ns = piped(ips, from, table);
      const r = results.get(name)!;
      r[family].push(ns);
      r[family === 'v4' ? 'r4' : 'r6'].push(ns / base);
    }
  }
}

console.log(`index ${indexPath}; ${ROUNDS} rounds of ${BATCH} lookups per variant and family; ${new Date().toISOString()}`);
printTable(loadRows);
console.log('');
const spread = (xs: number[]) => `${Math.round(quantile(xs, 0.25))}-${Math.round(quantile(xs, 0.75))}`;
const rows: (string | number)[][] = [['variant', 'IPv4 ns (IQR)', 'x baseline', 'IPv4 hits', 'IPv6 ns (IQR)', 'x baseline', 'IPv6 hits']];
for (const [name, r] of results) {
  const i = tables.findIndex((t) => t.name === name);
  const hit = (k: number) => (i < 0 ? '-' : `${(hits[i][k] * 100).toFixed(1)} %`);
  rows.push([
    name,
    `${Math.round(median(r.v4))} (${spread(r.v4)})`,
    r.r4.length ? median(r.r4).toFixed(2) : '1.00',
    hit(0),
    `${Math.round(median(r.v6))} (${spread(r.v6)})`,
    r.r6.length ? median(r.r6).toFixed(2) : '1.00',
    hit(1),
  ]);
}
printTable(rows);
if (sink === 42) console.log('');
