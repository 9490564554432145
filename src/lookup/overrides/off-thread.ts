/**
 * A read of the overrides file on a thread of its own (load-thread.ts),
 * bounded in time: a serving thread only waits for the message.
 */
import type { LoadRequest } from './load-thread.ts';
import type { OverridesLimits, OverridesRead } from './load.ts';

/** Bound on one read (a million lines take seconds on a busy two-core host). */
export const LOAD_TIMEOUT_MS = 120_000;

/** The thread's module: beside this one; in a compiled binary (an entry point of its own, named from src/) under the binary's root. */
function threadEntry(): string {
  const here = import.meta.url;
  if (here.includes('$bunfs') || here.includes('~BUN')) return new URL('./lookup/overrides/load-thread.ts', here).href;
  return new URL('./load-thread.ts', here).href;
}

/** Reads the file at `path` on a new thread, which ends with the read; never rejects (a failure is a refusal). */
export function readOverridesOffThread(path: string, limits: OverridesLimits, timeoutMs = LOAD_TIMEOUT_MS): Promise<OverridesRead> {
  const refused = (why: string): OverridesRead => ({ report: { path, applied: false, entries: 0, badLines: 0, errors: [], refused: `${path}: ${why}`, covers: null, tableBytes: 0 }, parts: null });
  let thread: Worker;
  try {
    thread = new Worker(threadEntry());
  } catch (e) {
    // No thread to be had (out of descriptors or memory): refused like any unreadable file, the overrides in force stay.
    return Promise.resolve(refused(`no reading thread: ${(e as Error).message}`));
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  return new Promise<OverridesRead>((resolve) => {
    timer = setTimeout(() => resolve(refused(`not read within ${timeoutMs} ms`)), timeoutMs);
    thread.onmessage = (e: MessageEvent<OverridesRead>) => resolve(e.data);
    thread.onerror = (e) => resolve(refused(`the reading thread failed: ${e.message}`));
    thread.addEventListener('close', () => resolve(refused('the reading thread ended without an answer')));
    thread.postMessage({ path, limits } satisfies LoadRequest);
  }).finally(() => {
    clearTimeout(timer);
    thread.terminate();
  });
}
