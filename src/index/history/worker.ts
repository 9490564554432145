/**
 * The history's thread (jobs.ts starts it): recording a version and
 * rebuilding one read and write hundreds of MB, so they run here, never on a
 * thread that answers requests. One job at a time, in the order sent.
 */
import { recordHistoryJob, rebuildHistoryJob, type HistoryJob } from './job-runner.ts';

declare const self: Worker;

self.onmessage = (event: MessageEvent) => {
  const { id, job } = event.data as { id: number; job: HistoryJob };
  try {
    const value = job.op === 'record' ? recordHistoryJob(job) : rebuildHistoryJob(job);
    self.postMessage({ id, ok: true, value });
  } catch (e) {
    self.postMessage({ id, ok: false, message: (e as Error).message });
  }
};
