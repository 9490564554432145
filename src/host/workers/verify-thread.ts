/**
 * A thread that verifies the index for a starting host (threads.ts
 * startIndexCheck): the hashing and the page faults of mapping the whole
 * file run beside the primary's own loading instead of after it, and the
 * mapping goes with the thread.
 */
import { verifyForWorkers } from './verified-index.ts';

declare const self: Worker;

self.onmessage = (event: MessageEvent) => {
  self.postMessage(verifyForWorkers(event.data as string));
};
