/**
 * The thread that reads the overrides file (started per read by
 * off-thread.ts): the parse's garbage and a read that blocks stay here, off
 * every serving thread, and go with the thread when it ends. It posts the
 * table's shared memory back.
 */
import { readOverridesFile, type OverridesLimits } from './load.ts';

declare const self: Worker;

/** What the thread is asked. */
export interface LoadRequest {
  path: string;
  limits: OverridesLimits;
}

self.onmessage = (event: MessageEvent<LoadRequest>) => {
  const { path, limits } = event.data;
  self.postMessage(readOverridesFile(path, limits));
};
