/**
 * One usage flush on the serving thread (issue 35 item 5): an in-memory
 * SQLite accounts store with n keys, each used 20 times in the same minute,
 * then `flush()` timed; 7 flushes, median (min–max) in ms. Run it in two
 * checkouts to compare them.
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
for (let round = 0; round < 7; round++) {
  const at = Date.now();
  for (const id of ids) for (let use = 0; use < 20; use++) store.recordUsage(id, at);
  const t0 = performance.now();
  await store.flush();
  times.push(performance.now() - t0);
}
console.log(`${root}: ${keys} keys, one flush ${median(times).toFixed(1)} ms (${Math.min(...times).toFixed(1)}–${Math.max(...times).toFixed(1)}), 7 flushes`);
await store.close();
