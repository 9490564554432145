/**
 * A pulled version whose recording waits for the publisher's history: a
 * puller that follows a publisher's history (src/index/pull/history-pull.ts)
 * names the version it is about to swap in here before the swap, so the
 * holder's recorder (recorder.ts) does not write it (a whole keyframe the
 * adoption would prune at once). Once the publisher's history is adopted or
 * refused, the puller records it itself unless that history holds it, then
 * clears the name. A name left by a process that is gone is ignored, so a
 * crash costs at most one recording, never a version missing from the history.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeTextAtomically } from '../../file-io/atomic-text.ts';
import { processAlive } from '../../file-io/atomic-file.ts';

const DEFERRED = 'deferred-recording.json';

/** The version a puller will record itself unless the publisher's history holds it. */
export interface DeferredRecording {
  sha256: string;
  /** When it started being served (the swap). */
  servedFromMs: number;
  /** The process that deferred it. */
  pid: number;
}

/** Names `sha256` as deferred by this process (written before the swap that serves it). */
export function deferRecording(dir: string, sha256: string, servedFromMs: number): void {
  mkdirSync(dir, { recursive: true });
  const entry: DeferredRecording = { sha256, servedFromMs, pid: process.pid };
  writeTextAtomically(join(dir, DEFERRED), JSON.stringify(entry));
}

/** The deferred version named in `dir`, or null (none, or unreadable: then nothing is deferred). */
export function deferredRecording(dir: string): DeferredRecording | null {
  try {
    const d = JSON.parse(readFileSync(join(dir, DEFERRED), 'utf8')) as DeferredRecording;
    return typeof d?.sha256 === 'string' && Number.isFinite(d.servedFromMs) && Number.isInteger(d.pid) ? d : null;
  } catch {
    return null;
  }
}

/** Whether the recording of version `id` is left to a puller that is still running. */
export function isDeferred(dir: string, id: string): boolean {
  const d = deferredRecording(dir);
  return d !== null && d.sha256 === id && processAlive(d.pid);
}

/** Clears the deferral when it names `sha256`. */
export function clearDeferred(dir: string, sha256: string): void {
  if (deferredRecording(dir)?.sha256 === sha256) rmSync(join(dir, DEFERRED), { force: true });
}
