/**
 * A serving host as `serve` starts it: one thread, or a pool of worker
 * threads (IPINTEL_WORKERS) behind a primary; in either case one feed
 * refresher, in this (the primary) thread, which swaps the index in
 * wherever it is served.
 */
import type { Config } from '../config.ts';
import type { RefresherOptions } from '../feeds/refresher.ts';
import type { RunningHost } from './running-host.ts';

/** Starts serving `config`; `feeds` overrides the refresher's options (tests: small builds, short timers); `afterSwap` sees every index the refresher swapped in (the publisher role publishes it). */
export async function startHost(
  config: Config,
  feeds: Partial<RefresherOptions> & { timeBudgetMs?: number } = {},
  afterSwap: ((path: string) => void) | null = null,
): Promise<RunningHost> {
  const then = <T>(swap: (path: string) => Promise<T>) => (afterSwap ? async (path: string) => {
    const swapped = await swap(path);
    afterSwap(path);
    return swapped;
  } : swap);
  if (config.workers > 1 && config.dbPath === ':memory:') {
    // Each thread would open its own empty database: keys made through one worker unknown to the others.
    console.error(`IPINTEL_DB=:memory: is one database per thread, not shareable by ${config.workers} workers: serving with 1`);
    config.workers = 1;
  }
  // Threads src/main.ts started before the configuration was read: the pool's, or stopped.
  const { takeEarlyThreads } = await import('./workers/early-threads.ts');
  if (config.workers === 1) {
    takeEarlyThreads(0);
    // The server's code from the bytecode bundle when it is current, like the pool's below (BENCHMARKS.md, start-up).
    const bundled = (await import('./workers/threads.ts')).bundledSingleHostModule();
    const { startSingleHost } = bundled !== null ? ((await import(bundled)) as typeof import('./single-host.ts')) : await import('./single-host.ts');
    return startSingleHost(config, feeds, then);
  }
  // The worker threads start loading their code first (src/main.ts started them already when it could); the primary then loads the pool's.
  const early = await import('./workers/threads.ts');
  const threads = early.startThreads(config.workers, takeEarlyThreads(config.workers));
  const bundledPool = early.bundledPoolModule();
  const { startWorkerPool } = bundledPool !== null ? ((await import(bundledPool)) as typeof import('./workers/pool.ts')) : await import('./workers/pool.ts');
  // The primary serves nothing: it does not load the server's code (the workers do, each in its own thread, and
  // loading it here first made the start slower, not the workers faster). Its refresher's code loads once they serve:
  // the primary's own work (migrations, verifying the index) is what the workers wait for.
  // Migrations and the index's check run once, in the pool's code (the bundle's bytecode: the source's accounts store
  // and drizzle cost the primary ~0.1 s of CPU more), not in every worker; the workers load their code meanwhile.
  const pool = await startWorkerPool(config, undefined, null, threads);
  const { startFeedRefresher } = await import('../feeds/start.ts');
  // One refresher per host, here in the primary: it swaps every worker at once (the workers only report its state).
  const swapAll = async () => {
    const answer = await pool.reloadAll();
    return { generation: answer.index.generation, builtAt: answer.index.built_at };
  };
  const status = startFeedRefresher(config, { managedBy: pool.managedBy, loadedAt: () => pool.loadedAt(), swap: then(swapAll) }, feeds);
  return {
    port: pool.port,
    reload: () => pool.reloadAll(),
    async stop() {
      status.refresher?.close(); // kills a refresh child under way
      await pool.stop();
    },
  };
}
