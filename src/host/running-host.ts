/** What a started host hands back, whether it serves from one thread (single-host.ts) or a pool (serve-host.ts). */

/** A running host. */
export interface RunningHost {
  port: number;
  /** Reloads the index file wherever it is served (this thread, or every worker): what an index puller calls after its swap. */
  reload(): Promise<unknown>;
  /** Stops the refresher, drains the workers, flushes usage counters and closes the database. */
  stop(): Promise<void>;
}
