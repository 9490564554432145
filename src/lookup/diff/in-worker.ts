/**
 * Comparing two index files on a thread of its own. A serving process
 * answers requests meanwhile, and gets back all the memory the comparison
 * touched when the thread ends: the two mappings (every page of both files
 * read) go with the thread, not whenever a collection finds them
 * unreachable (compiled code may keep an object it specialised on alive).
 */
import type { IndexDiffBody } from '../../contract/diff.ts';
import type { CompareRequest } from './compare-worker.ts';
import type { DiffOptions } from './sweep.ts';

/** The worker's module: beside this one; in a compiled binary (an entry point of its own, named from src/) under the binary's root. */
function workerEntry(): string {
  const here = import.meta.url;
  if (here.includes('$bunfs') || here.includes('~BUN')) return new URL('./lookup/diff/compare-worker.ts', here).href;
  return new URL('./compare-worker.ts', here).href;
}

/** diffIndexes of the files at two paths, on a worker thread that ends with it; rejects with the worker's error. */
export function diffFilesInWorker(oldPath: string, newPath: string, options: DiffOptions = {}): Promise<IndexDiffBody> {
  const worker = new Worker(workerEntry());
  return new Promise<IndexDiffBody>((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<{ ok: true; diff: IndexDiffBody } | { ok: false; message: string }>) => (e.data.ok ? resolve(e.data.diff) : reject(new Error(e.data.message)));
    worker.onerror = (e) => reject(new Error(e.message));
    worker.addEventListener('close', () => reject(new Error('the comparison thread ended without an answer')));
    const request: CompareRequest = { oldPath, newPath, options };
    worker.postMessage(request);
  }).finally(() => worker.terminate());
}
