/**
 * A host serving from one thread (IPINTEL_WORKERS=1, a publisher, an
 * in-memory database): the whole server and its feed refresher in the
 * thread that called it. serve-host.ts loads this module from the bytecode
 * bundle when it is current (src/host/workers/worker-bundle.ts), else from
 * the source; what crosses between the two copies is the configuration and
 * the refresher's options (plain values and functions) and the RunningHost
 * it returns, as with the pool's module.
 */
import type { Config } from '../config.ts';
import type { RefresherOptions } from '../feeds/refresher.ts';
import { holderTarget, startFeedRefresher } from '../feeds/start.ts';
import { reloadServer } from '../http/reload-server.ts';
import { openAccountStore } from './open-accounts.ts';
import type { RunningHost } from './running-host.ts';
import { startServer } from './start-server.ts';

/** Starts the server and its refresher in this thread; `then` wraps the refresher's swap (the publisher's afterSwap). */
export async function startSingleHost(
  config: Config,
  feeds: Partial<RefresherOptions> & { timeBudgetMs?: number },
  then: <T>(swap: (path: string) => Promise<T>) => (path: string) => Promise<T>,
): Promise<RunningHost> {
  const single = await startServer(config, { accounts: await openAccountStore(config.dbPath) });
  // Serving alone, this thread refreshes.
  const holder = single.services.index;
  const served = holderTarget(holder);
  const managedBy = holder.current.meta.managedBy === 'server' ? 'server' : 'operator';
  const status = startFeedRefresher(config, { ...served, managedBy, swap: then(served.swap) }, feeds);
  single.services.feeds = status;
  return {
    port: single.port,
    reload: () => reloadServer(single.services),
    async stop() {
      status.refresher?.close(); // kills a refresh child under way
      await single.stop();
    },
  };
}
