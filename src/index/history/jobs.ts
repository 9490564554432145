/**
 * The history thread as promises: jobs go to one worker (worker.ts), started
 * on first use and never keeping the process alive; its answers settle them.
 */
import type { HistoryJob } from './job-runner.ts';

/** The worker's module beside this one; in a compiled binary (a second entry point, named from src/) under the binary's root. */
function workerEntry(): string {
  const here = import.meta.url;
  if (here.includes('$bunfs') || here.includes('~BUN')) return new URL('./index/history/worker.ts', here).href;
  return new URL('./worker.ts', here).href;
}

/** Sends history jobs to the history thread. */
export class HistoryJobs {
  private worker: Worker | null = null;
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  /** Runs a job on the history thread; rejects with its error message. */
  run<T>(job: HistoryJob): Promise<T> {
    const worker = this.start();
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.ref();
      worker.postMessage({ id, job });
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(workerEntry());
    worker.onmessage = (event: MessageEvent) => {
      const { id, ok, value, message } = event.data as { id: number; ok: boolean; value?: unknown; message?: string };
      const w = this.waiting.get(id);
      this.waiting.delete(id);
      if (this.waiting.size === 0) worker.unref();
      if (ok) w?.resolve(value);
      else w?.reject(new Error(message));
    };
    worker.onerror = (event) => {
      // A dead thread fails what it held; the next job starts a new one.
      for (const w of this.waiting.values()) w.reject(new Error(`history thread failed: ${event.message}`));
      this.waiting.clear();
      this.worker = null;
    };
    worker.unref();
    this.worker = worker;
    return worker;
  }

  /** Stops the thread (jobs in flight are failed). */
  close(): void {
    this.worker?.terminate();
    this.worker = null;
    for (const w of this.waiting.values()) w.reject(new Error('history thread stopped'));
    this.waiting.clear();
  }
}
