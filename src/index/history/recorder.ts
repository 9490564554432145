/**
 * Keeping every index a server serves: when the holder swaps in a new index
 * (start-up, the refresher, a pull, /reload after an operator's rebuild),
 * its file is hard-linked at once (the name may be replaced again a moment
 * later; the link keeps these bytes) and recorded on the history thread with
 * the moment it started being served. The serving thread only links.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { IndexHolder } from '../holder.ts';
import { linkOrCopy } from '../link-or-copy.ts';
import type { IndexReader } from '../reader.ts';
import type { RecordOutcome } from './job-runner.ts';
import type { HistoryJobs } from './jobs.ts';
import type { HistoryConfig } from './past-indexes.ts';
import { processAlive } from '../../file-io/atomic-file.ts';

/** Where a recording went: logged, and failures reported to the status. */
export interface RecorderEvents {
  recorded?(outcome: RecordOutcome): void;
  failed(message: string): void;
}

/** Records the holder's index now and after every swap; returns a promise of the recordings queued so far (tests wait on it). */
export function recordServedIndexes(holder: IndexHolder, config: HistoryConfig, jobs: HistoryJobs, now: () => number, events: RecorderEvents): () => Promise<void> {
  let last: IndexReader | null = null;
  let queued: Promise<void> = Promise.resolve();
  const record = () => {
    const reader = holder.current;
    if (reader === last) return; // a coverage change, not a swap
    last = reader;
    const servedFromMs = now();
    let link: string;
    try {
      link = pinForRecording(config, holder.describe().path, `${servedFromMs}-${holder.generation}`);
    } catch (e) {
      events.failed(`history: cannot keep ${holder.describe().path}: ${(e as Error).message}`);
      return;
    }
    // A version a puller deferred (deferred-recording.ts) is not written here: the publisher's history, or the puller, records it.
    const job = jobs.run<RecordOutcome>({ op: 'record', dir: config.dir, path: link, servedFromMs, nowMs: servedFromMs, retentionMs: config.retentionMs, unlessDeferred: true });
    queued = queued.then(() =>
      job.then(
        (outcome) => events.recorded?.(outcome),
        (e) => events.failed(`history: ${(e as Error).message}`),
      ),
    );
  };
  sweepIncoming(join(config.dir, 'incoming'));
  record();
  holder.onChange(record);
  return () => queued;
}

/**
 * Records a version a publisher publishes (src/index/publish/publish-history.ts)
 * as served from the moment of its publish, on the history thread; throws
 * when another process holds the recording lock or the history cannot be written.
 */
export function recordPublishedIndex(config: HistoryConfig, jobs: HistoryJobs, path: string, publishedFromMs: number): Promise<RecordOutcome> {
  return recordIndexAt(config, jobs, path, publishedFromMs, 'publish');
}

/** Records the index at `path` as served from `servedFromMs` (a publish, or a pull whose publisher's history lacks it), tagging its link `tag`; throws as recordPublishedIndex. */
export async function recordIndexAt(config: HistoryConfig, jobs: HistoryJobs, path: string, servedFromMs: number, tag: string): Promise<RecordOutcome> {
  const link = pinForRecording(config, path, `${servedFromMs}-${tag}`);
  const outcome = await jobs.run<RecordOutcome>({ op: 'record', dir: config.dir, path: link, servedFromMs, nowMs: servedFromMs, retentionMs: config.retentionMs });
  if (outcome === null) throw new Error(`another process is recording into ${config.dir}`);
  return outcome;
}

/** Links `path` into the history's incoming folder as `<tag>-<pid>.idx` (the record job removes it); returns the link. */
function pinForRecording(config: HistoryConfig, path: string, tag: string): string {
  const incoming = join(config.dir, 'incoming');
  mkdirSync(incoming, { recursive: true });
  const link = join(incoming, `${tag}-${process.pid}.idx`);
  linkOrCopy(path, link);
  return link;
}

/**
 * Removes the links a process that is gone left behind (it stopped between
 * linking and recording): each would keep a whole replaced index's blocks
 * allocated. A link names its process (`<ms>-<generation>-<pid>.idx`).
 */
function sweepIncoming(incoming: string): void {
  let names: string[];
  try {
    names = readdirSync(incoming);
  } catch {
    return; // no folder yet
  }
  for (const name of names) {
    const pid = Number(/-(\d+)\.idx$/.exec(name)?.[1]);
    if (pid === process.pid || (Number.isInteger(pid) && processAlive(pid))) continue;
    rmSync(join(incoming, name), { force: true });
  }
}

