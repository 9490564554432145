/**
 * The history's thread (jobs.ts starts it): recording a version and
 * rebuilding one read and write hundreds of MB, so they run here, never on a
 * thread that answers requests; so does checking a publisher's history
 * before it is adopted (history-adopt.ts). One job at a time, in the order sent.
 */
import { runHistoryJob, type HistoryJob } from './job-runner.ts';

declare const self: Worker;

self.onmessage = (event: MessageEvent) => {
  const { id, job } = event.data as { id: number; job: HistoryJob };
  try {
    const value = runHistoryJob(job);
    self.postMessage({ id, ok: true, value });
  } catch (e) {
    self.postMessage({ id, ok: false, message: (e as Error).message });
  }
  // A job leaves hundreds of MB of frames, copies and mappings for the collector, which may not come for a long while on an idle thread: give them back now.
  Bun.gc(true);
};
