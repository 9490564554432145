/**
 * Worker threads `bun run start` started before it read its configuration
 * (src/main.ts), held here for the host that serves (serve-host.ts). Imports
 * nothing at run time: a host serving from one thread asks it too.
 */
import type { StartedThread } from './threads.ts';

const waiting: StartedThread[] = [];

/** Holds threads started early until the host takes them. */
export function holdEarlyThreads(threads: StartedThread[]): void {
  waiting.push(...threads);
}

/** The threads started early, `count` at most; any others are stopped (the configuration serves with fewer). */
export function takeEarlyThreads(count: number): StartedThread[] {
  const taken = waiting.splice(0);
  for (const thread of taken.slice(count)) thread.worker.terminate();
  return taken.slice(0, count);
}
