/** Writing to a stream with backpressure, without leaving a listener behind per wait. */
import { once } from 'node:events';
import type { Writable } from 'node:stream';

/**
 * Writes a chunk; when the stream's buffer is full, waits until it drains or
 * closes. The waiter that did not fire is removed (racing two bare `once`
 * calls left one `close` listener per wait: a 482 MiB download warned of a
 * listener leak). An error ends the wait; the reading side reports it.
 */
export async function writeOrWait(stream: Writable, chunk: Uint8Array): Promise<void> {
  if (stream.write(chunk)) return;
  const stop = new AbortController();
  try {
    await Promise.race([once(stream, 'drain', { signal: stop.signal }), once(stream, 'close', { signal: stop.signal })]);
  } catch {
    // an error or the abort below: nothing to wait for
  } finally {
    stop.abort();
  }
}
