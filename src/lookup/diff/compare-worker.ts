/**
 * The worker thread of diffFilesInWorker (in-worker.ts): maps both files,
 * compares them (sweep.ts) and posts the answer, or the error's message.
 * Its thread ends with the comparison, and with it every mapping and
 * compiled function that saw the files.
 */
import { IndexReader } from '../../index/reader.ts';
import { diffIndexes, type DiffOptions } from './sweep.ts';

/** What the worker is asked. */
export interface CompareRequest {
  oldPath: string;
  newPath: string;
  options: DiffOptions;
}

declare const self: Worker;

self.onmessage = (e: MessageEvent<CompareRequest>) => {
  const { oldPath, newPath, options } = e.data;
  try {
    // The files were verified when they were served: no second pass over every section.
    const oldR = IndexReader.open(oldPath, { verifyChecksums: false });
    const newR = IndexReader.open(newPath, { verifyChecksums: false });
    self.postMessage({ ok: true, diff: diffIndexes(oldR, newR, options) });
  } catch (err) {
    self.postMessage({ ok: false, message: (err as Error).message });
  }
};
