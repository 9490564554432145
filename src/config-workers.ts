/**
 * IPINTEL_WORKERS on its own, so that `bun run start` can start the worker
 * threads before the rest of the configuration (and the code that reads it)
 * has loaded: src/main.ts, src/host/workers/early-threads.ts.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { DEFAULT_INDEX_PATH } from './index/default-paths.ts';

/** Upper bound on IPINTEL_WORKERS: each worker holds its own heap and caches. */
export const MAX_WORKERS = 256;

/** IPINTEL_WORKERS: a whole number 1..MAX_WORKERS; unset or blank: the CPUs this process may use. */
export function workerCount(v: string | undefined): number {
  const text = v?.trim() || null;
  if (text === null) return Math.max(1, Math.min(MAX_WORKERS, availableParallelism()));
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || n < 1 || n > MAX_WORKERS) throw new Error(`IPINTEL_WORKERS must be a whole number 1..${MAX_WORKERS} (got "${v}")`);
  return n;
}

/**
 * How many worker threads `bun run start` may start before it reads the
 * configuration: the pool's size when the environment plainly serves an
 * index already present from a pool (no publisher role, no pulling, no
 * in-memory database, no first build), else 0. Only a hint: the host takes
 * the threads where its configuration agrees and stops the others
 * (serve-host.ts), so a wrong guess costs their load, never what is served.
 */
export function earlyWorkerCount(env: Record<string, string | undefined>): number {
  const set = (name: string) => (env[name]?.trim() ?? '') !== '';
  if (set('IPINTEL_ROLE') && env.IPINTEL_ROLE!.trim().toLowerCase() !== 'server') return 0;
  if (set('IPINTEL_INDEX_URL') || env.IPINTEL_DB?.trim() === ':memory:') return 0;
  if (!existsSync(env.IPINTEL_INDEX?.trim() || DEFAULT_INDEX_PATH)) return 0;
  try {
    const count = workerCount(env.IPINTEL_WORKERS);
    return count > 1 ? count : 0;
  } catch {
    return 0; // loadConfig says why
  }
}
