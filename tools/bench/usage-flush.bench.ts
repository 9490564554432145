/**
 * One usage flush on the serving thread (issue 35 item 5): an in-memory
 * SQLite accounts store with n keys, each used 20 times in the same minute,
 * then `flush()` timed, and the longest stretch the event loop went without
 * a turn meanwhile (what a request arriving during the flush waits); 7
 * flushes, median (min–max) in ms. Run it in two checkouts to compare them.
 *
 *   bun tools/bench/usage-flush.bench.ts [--keys 2000] [--root <checkout>]
 */
import { join } from 'node:path';
import { median } from './bench-kit.ts';

const argv = process.argv.slice(2);
const option = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const keys = Number(option('--keys') ?? 2000);
const root = option('--root') ?? join(import.meta.dir, '..', '..');
const { openAccounts } = (await import(join(root, 'src/accounts/store.ts'))) as typeof import('../../src/accounts/store.ts');

const store = await openAccounts(':memory:', { flushIntervalMs: 0, syncIntervalMs: 0 });
const ids: string[] = [];
for (let i = 0; i < keys; i++) ids.push((await store.grantKeyByEmail(`bench${i}@example.test`, 'pro', 'bench')).created.key.id);
const times: number[] = [];
const stalls: number[] = [];
for (let round = 0; round < 7; round++) {
  const at = Date.now();
  for (const id of ids) for (let use = 0; use < 20; use++) store.recordUsage(id, at);
  // The longest the event loop went without a turn while the flush ran (process CPU ms, so a
  // loaded machine's descheduling does not count): what a request arriving then waits at least.
  const cpuMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  let last = cpuMs();
  let stall = 0;
  let running = true;
  const tick = () => {
    const t = cpuMs();
    stall = Math.max(stall, t - last);
    last = t;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const t0 = performance.now();
  await store.flush();
  times.push(performance.now() - t0);
  running = false;
  await new Promise((resolve) => setImmediate(resolve));
  stalls.push(Math.max(stall, cpuMs() - last));
}
const range = (xs: number[]) => `${median(xs).toFixed(1)} ms (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`;
console.log(`${root}: ${keys} keys, one flush ${range(times)}, longest stretch without an event-loop turn ${range(stalls)} of CPU, 7 flushes`);
await store.close();
