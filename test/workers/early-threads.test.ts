/**
 * Worker threads started ahead of their pool (src/host/workers/threads.ts, as
 * `serve` does): the pool takes them over and serves; one that exited
 * while loading, before any listener of the pool's, is replaced.
 */
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { startWorkerPool, type WorkerPool } from '../../src/host/workers/pool.ts';
import { startThreads } from '../../src/host/workers/threads.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-early-threads-'));
let pool: WorkerPool | null = null;
afterAll(async () => {
  await pool?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('threads started early: the pool takes them over; one that exited meanwhile is started again, and both serve', async () => {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', IPINTEL_WORKERS: '2', IPINTEL_HISTORY: 'off', IPINTEL_INDEX: await fixtureIndexPath(), IPINTEL_DB: join(dir, 'db.sqlite') });
  const threads = startThreads(2);
  const kept = threads[0]!.worker;
  threads[1]!.worker.terminate();
  const deadline = Date.now() + 30_000;
  while (!threads[1]!.closed && Date.now() < deadline) await Bun.sleep(10);
  expect(threads[1]!.closed).toBe(true);
  const lines: string[] = [];
  // null: the pool runs the migrations itself (`before` would say the host ran them).
  pool = await startWorkerPool(config, (line) => lines.push(line), null, threads);
  expect(pool.worker(0)).toBe(kept);
  expect(pool.worker(1)).not.toBe(threads[1]!.worker);
  expect(lines.some((l) => l.includes('worker 1 exited while loading'))).toBe(true);
  expect(pool.state.crashes).toBe(0);
  // Each request on its own connection, so the kernel may hand it to either worker.
  const answers = await Promise.all(Array.from({ length: 8 }, () => fetch(`${pool!.url}/health`, { headers: { connection: 'close' } })));
  expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
}, 120_000);

test('threads held from before the configuration: the host takes as many as it serves with, stops the others, and starts any missing', async () => {
  const { holdEarlyThreads, takeEarlyThreads } = await import('../../src/host/workers/early-threads.ts');
  const early = startThreads(3);
  holdEarlyThreads(early);
  const taken = takeEarlyThreads(2);
  expect(taken).toEqual(early.slice(0, 2));
  const deadline = Date.now() + 30_000;
  while (!early[2]!.closed && Date.now() < deadline) await Bun.sleep(10);
  expect(early[2]!.closed).toBe(true);
  // Taken once: a second host (none in a process; a test) finds none.
  expect(takeEarlyThreads(2)).toEqual([]);
  const pool = startThreads(3, taken);
  expect(pool.length).toBe(3);
  expect(pool.slice(0, 2)).toEqual(taken);
  for (const thread of pool) thread.worker.terminate();
}, 120_000);
