/**
 * One off-thread read of an overrides file of N IPv4 /32s, each with a note
 * of its own (the worst case for the pooled field sets): the table's bytes
 * per entry, the read's time, this process's peak (VmHWM, the reading
 * thread's memory included) and its anonymous memory after the thread ended
 * and a few collections. Run the generation step first (its strings must not
 * count):
 *
 *   bun tools/bench/overrides-load.bench.ts 1000000 --generate
 *   MIMALLOC_PURGE_DELAY=1000 bun tools/bench/overrides-load.bench.ts 1000000 [maxTableBytes]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readOverridesOffThread } from '../../src/lookup/overrides/off-thread.ts';

const n = Number(process.argv[2] ?? 1_000_000);
const path = join(tmpdir(), `ipintel-overrides-bench-${n}.csv`);
if (process.argv[3] === '--generate') {
  const lines = ['cidr,note'];
  for (let i = 0; i < n; i++) lines.push(`${10 + (i >>> 24)}.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255},note number ${i} of its own line`);
  writeFileSync(path, lines.join('\n') + '\n');
  console.log(`wrote ${path}`);
  process.exit(0);
}
const status = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;
Bun.gc(true);
const before = status('RssAnon');
const t0 = performance.now();
const read = await readOverridesOffThread(path, { maxFileBytes: 256 << 20, maxTableBytes: Number(process.argv[3] ?? 2 ** 30) });
const ms = performance.now() - t0;
const peak = status('VmHWM');
for (let i = 0; i < 5; i++) {
  Bun.gc(true);
  await Bun.sleep(1000);
}
const r = read.report;
console.log(
  JSON.stringify({
    lines: n,
    applied: r.applied,
    refused: r.refused,
    tableMiB: +(r.tableBytes / 1048576).toFixed(1),
    bytesPerEntry: r.entries ? +(r.tableBytes / r.entries).toFixed(1) : 0,
    readMs: Math.round(ms),
    peakMiB: Math.round(peak),
    settledAnonRiseMiB: +(status('RssAnon') - before).toFixed(1),
  }),
);
