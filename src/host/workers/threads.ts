/**
 * Starting a pool's worker threads ahead of the pool: `serve` starts them
 * before the primary loads the pool's own code (rate-limit tables, radar,
 * overrides: several hundred modules), so both load at once. Tiny on
 * purpose: what it imports is loaded before any thread starts.
 */

import { bundledPool, bundledSingleHost, freshWorkerBundle } from './worker-bundle.ts';

/** Whether this runs from a compiled binary (its modules under Bun's virtual root). */
const COMPILED = import.meta.url.includes('$bunfs') || import.meta.url.includes('~BUN');
/** The entry chosen by this process's first start of a thread (every later thread, restarts too, loads the same). */
let chosen: string | null = null;
/** The bundle's worker entry when `chosen` is one (the pool then loads from the same bundle). */
let bundled: string | null = null;

/**
 * The worker's module: in a compiled binary (where `bun run compile` embeds
 * it as a second entry point, named from src/) under the binary's virtual
 * root; from the source tree, the prebuilt bundle when it is the current
 * one (worker-bundle.ts), else the module beside this one.
 */
export function workerEntry(): string {
  if (chosen !== null) return chosen;
  chosen = (COMPILED ? null : (bundled = freshWorkerBundle())) ?? besideThis('worker-main.ts');
  return chosen;
}

/**
 * The pool's module (pool.ts) in the bundle the threads load, for `serve`
 * (its own copy of the modules it shares with the primary's others: it
 * receives and returns plain values and promises); null when they load the
 * source or run in a compiled binary, where `serve` imports pool.ts by name
 * (so `bun build --compile` embeds it).
 */
export function bundledPoolModule(): string | null {
  workerEntry();
  return bundled !== null ? bundledPool(bundled) : null;
}

/**
 * The one-thread host's module (single-host.ts) in the current bundle, for
 * `serve` with one worker (its own copy of the modules it shares with the
 * thread's others, like the pool's); null when there is none or in a
 * compiled binary, where `serve` imports single-host.ts by name.
 */
export function bundledSingleHostModule(): string | null {
  workerEntry();
  return bundled !== null ? bundledSingleHost(bundled) : null;
}

/** A thread started ahead of its pool, with what it met before the pool took it over (its events are not replayed). */
export interface StartedThread {
  worker: Worker;
  closed: boolean;
  error: string;
}

/** Starts worker threads loading their code now, `count` with those already started (`early`); startWorkerPool takes them over. */
export function startThreads(count: number, early: StartedThread[] = []): StartedThread[] {
  return [...early.slice(0, count), ...startNew(count - early.length)];
}

/** Starts `count` threads (none when not positive). */
function startNew(count: number): StartedThread[] {
  return Array.from({ length: Math.max(0, count) }, () => {
    const thread: StartedThread = { worker: new Worker(workerEntry()), closed: false, error: '' };
    thread.worker.addEventListener('error', (event) => (thread.error = (event as ErrorEvent).message ?? String(event)));
    thread.worker.addEventListener('close', () => (thread.closed = true));
    return thread;
  });
}

/** A thread module beside this one: in a compiled binary, an entry point under its virtual root (named from src/). */
function besideThis(name: string): string {
  return new URL(COMPILED ? `./host/workers/${name}` : `./${name}`, import.meta.url).href;
}
