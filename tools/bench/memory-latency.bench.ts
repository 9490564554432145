/**
 * The floor of a uniformly random lookup on this machine: the cost of one
 * dependent random read (pointer chasing) in buffers the size of the index's
 * tables, in anonymous memory and in a memory-mapped file as the reader uses.
 *
 *   bun tools/bench/memory-latency.bench.ts [--steps N]
 *
 * Each buffer holds one random cycle (Sattolo's algorithm) of u32 indexes
 * spread one per 64-byte line, so every step is a read whose address depends
 * on the previous read: the CPU cannot overlap them. The baseline row is the
 * same loop over a 16 KiB buffer (L1-resident): the loop's own cost per step.
 * A second column runs two independent chains at once (the memory-level
 * parallelism a layout gains when its reads do not depend on each other).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, printTable, xorshift32 } from './bench-kit.ts';

const args = process.argv.slice(2);
const stepsAt = args.indexOf('--steps');
const STEPS = stepsAt >= 0 ? Number(args[stepsAt + 1]) : 2_000_000;
const LINE_WORDS = 16; // one u32 slot per 64-byte line

/** A buffer of `bytes` holding one random cycle through all its lines. */
function cycle(bytes: number): Uint32Array {
  const lines = bytes / 64;
  const order = new Uint32Array(lines);
  for (let i = 0; i < lines; i++) order[i] = i;
  const rand = xorshift32(bytes >>> 6 || 7);
  // Sattolo: a single cycle visiting every line.
  for (let i = lines - 1; i > 0; i--) {
    const j = rand() % i;
    const t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  const a = new Uint32Array(bytes / 4);
  for (let i = 0; i < lines; i++) a[order[i] * LINE_WORDS] = order[(i + 1) % lines] * LINE_WORDS;
  return a;
}

function chase(a: Uint32Array, n: number): number {
  let p = 0;
  for (let i = 0; i < n; i++) p = a[p];
  return p;
}

function chase2(a: Uint32Array, n: number): number {
  let p = 0;
  let q = a[(a.length >>> 1) & ~(LINE_WORDS - 1)] ;
  for (let i = 0; i < n; i++) {
    p = a[p];
    q = a[q];
  }
  return p + q;
}

let sink = 0;
function nsPerStep(f: (a: Uint32Array, n: number) => number, a: Uint32Array): number {
  sink += f(a, STEPS / 4); // warm-up: JIT and page faults
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = Bun.nanoseconds();
    sink += f(a, STEPS);
    runs.push((Bun.nanoseconds() - t0) / STEPS);
  }
  return median(runs);
}

const dir = mkdtempSync(join(tmpdir(), 'memlat-'));
const rows: (string | number)[][] = [['buffer', 'anon ns/read', 'mmap ns/read', 'anon, 2 chains ns/read-pair', 'vs L1 baseline (mmap)']];
let base = 0;
for (const mib of [1 / 64, 1, 4, 16, 64, 128, 256]) {
  const bytes = Math.round(mib * 2 ** 20);
  const anon = cycle(bytes);
  const file = join(dir, `c${bytes}`);
  writeFileSync(file, new Uint8Array(anon.buffer));
  const mapped = Bun.mmap(file, { shared: false });
  const mview = new Uint32Array(mapped.buffer, mapped.byteOffset, bytes / 4);
  const a = nsPerStep(chase, anon);
  const m = nsPerStep(chase, mview);
  const two = nsPerStep(chase2, anon);
  if (base === 0) base = m;
  rows.push([mib < 1 ? `${bytes / 1024} KiB (baseline)` : `${mib} MiB`, a.toFixed(1), m.toFixed(1), two.toFixed(1), `${(m / base).toFixed(1)}x`]);
  rmSync(file);
}
rmSync(dir, { recursive: true, force: true });
console.log(`dependent random reads, ${STEPS.toLocaleString()} steps, median of 5`);
printTable(rows);
if (sink === 42) console.log('');
