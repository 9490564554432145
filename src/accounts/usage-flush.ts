/**
 * Writing a drained usage batch without holding the serving thread: with
 * SQLite every statement runs on the thread that answers requests, so a
 * batch is written in transactions of at most FLUSH_CHUNK_KEYS keys with a
 * turn of the event loop between them. Each key's rows (minutes, days, last
 * use) go in one transaction, so every count is written exactly once or,
 * when a transaction fails, handed back to the counter with every later
 * chunk's; what committed before stays committed and is not handed back.
 * PostgreSQL's statements wait on the network, not on this thread: its
 * batch stays one transaction.
 */
import type { AccountRows, AccountsBackend } from './backend.ts';
import { splitBatch, type UsageBatch, type UsageCounter } from './usage-counter.ts';

/** Keys written per transaction (at ~15 µs a key on SQLite, a few ms of the serving thread at a time). */
export const FLUSH_CHUNK_KEYS = 128;

/** One turn of the event loop: requests that arrived meanwhile are answered before the next chunk. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Writes `batch` chunk by chunk; `last` runs inside the last chunk's
 * transaction (pruning). On a failure the unwritten counts go back to
 * `counter` and the error is rethrown.
 */
export async function writeUsageInChunks(backend: AccountsBackend, batch: UsageBatch, counter: UsageCounter, last: ((rows: AccountRows) => Promise<void>) | null, chunkKeys = backend.dialect === 'sqlite' ? FLUSH_CHUNK_KEYS : Infinity): Promise<void> {
  const chunks = splitBatch(batch, chunkKeys);
  for (let i = 0; i < chunks.length; i++) {
    if (i > 0) await nextTurn();
    try {
      await backend.transaction(async (rows) => {
        await rows.writeUsageBatch(chunks[i]);
        if (last !== null && i === chunks.length - 1) await last(rows);
      });
    } catch (err) {
      for (let j = i; j < chunks.length; j++) counter.restore(chunks[j]);
      throw err;
    }
  }
}
