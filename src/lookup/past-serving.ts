/**
 * Serving snapshots of past indexes (src/lookup/serving.ts): one per
 * retained version asked for, made with the coverage that index had at the
 * moment asked (a kind may have turned stale while it was served), the
 * policy and overrides in force now, and small memos of its own. A version
 * that is the index served now is answered from the mapped current file.
 */
import { coverageOf, sameCoverage } from '../index/coverage.ts';
import type { PastIndexes } from '../index/history/past-indexes.ts';
import { MAPPED_PAST } from '../index/history/past-indexes.ts';
import type { HistoryVersion } from '../index/history/store.ts';
import type { IndexReader } from '../index/reader.ts';
import { ApiError } from '../api-error.ts';
import type { PastMoment } from './past-moment.ts';
import type { MemoSizes } from './memo-sizes.ts';
import { ServingSnapshot, type ServingHolder } from './serving.ts';

/** Memo sizes of a past snapshot: past answers are rarer than current ones, and their memory comes out of the same budget. */
const PAST_MEMO_SIZES: Readonly<MemoSizes> = { v1TailSlots: 1 << 12, scoredViews: 64, legacyLineSlots: 1 << 4 };
/** `at` texts whose moment is remembered: a client asks about the same moment again and again. */
const MAX_MOMENTS = 64;

/** Snapshots of past versions for one serving holder. */
export class PastServing {
  private readonly kept = new Map<string, ServingSnapshot>();
  private readonly moments = new Map<string, PastMoment>();

  constructor(
    private readonly serving: ServingHolder,
    readonly history: PastIndexes,
  ) {}

  /**
   * The moment an `at` text named last time, while it still holds: inside
   * the retention at `nowMs`, and its snapshot still the one kept for its
   * version (no policy, overrides or coverage change since). A past moment's
   * version never changes, so nothing else needs checking (no catalog read,
   * no coverage computed: a warm past answer costs about a current one).
   */
  recall(at: string, nowMs: number): PastMoment | null {
    const m = this.moments.get(at);
    if (m === undefined) return null;
    const s = m.snapshot;
    if (m.atMs >= nowMs - this.history.config.retentionMs && this.kept.get(m.version.id) === s && s.policy === this.serving.policy.current && s.overridesGeneration === this.serving.overrides.generation) return m;
    this.moments.delete(at);
    return null;
  }

  /** Remembers the moment of an `at` text (recall). */
  remember(at: string, moment: PastMoment): PastMoment {
    if (this.moments.size >= MAX_MOMENTS) this.moments.clear();
    this.moments.set(at, moment);
    return moment;
  }

  /**
   * The snapshot answering for `version` at `atMs`: at once when its index is
   * mapped, else once rebuilt. Throws (or rejects with) SERVICE_UNAVAILABLE
   * when the history cannot give it, and when `version` is the newest
   * recorded but not the index served now: the index swapped in since is
   * still being recorded (or cannot be), so a moment after the newest
   * recorded one may be either's: no answer rather than a wrong immutable one.
   */
  snapshotOf(version: HistoryVersion, atMs: number, newest: boolean): ServingSnapshot | Promise<ServingSnapshot> {
    const current = this.serving.snapshot.reader;
    if (newest && !isVersion(current, version)) {
      throw new ApiError('SERVICE_UNAVAILABLE', 'The index served now is not in the history yet (being recorded, or the recording failed): moments since the last recorded swap cannot be answered', { recorded_until: new Date(version.servedFromMs).toISOString() });
    }
    const reader = isVersion(current, version) ? current : this.history.readerOf(version);
    if (reader instanceof Promise) {
      return reader.then(
        (r) => this.compose(version, r, atMs),
        (e) => {
          throw unavailable(e);
        },
      );
    }
    return this.compose(version, reader, atMs);
  }

  private compose(version: HistoryVersion, reader: IndexReader, atMs: number): ServingSnapshot {
    const coverage = coverageOf(reader.meta, atMs);
    const policy = this.serving.policy.current;
    const overrides = this.serving.overrides;
    const kept = this.kept.get(version.id);
    if (kept && kept.reader === reader && kept.policy === policy && kept.overridesGeneration === overrides.generation && sameCoverage(kept.coverage, coverage)) return kept;
    const snapshot = new ServingSnapshot(reader, coverage, policy, overrides.lookupFor(reader), overrides.generation, 0, PAST_MEMO_SIZES);
    this.kept.delete(version.id);
    this.kept.set(version.id, snapshot);
    if (this.kept.size > MAPPED_PAST) this.kept.delete(this.kept.keys().next().value!);
    return snapshot;
  }
}

/** Whether a mapped index is this version (its build time and size: the history's versions differ in both or are the same file). */
function isVersion(reader: IndexReader, version: HistoryVersion): boolean {
  return reader.file.builtAtMs === version.builtAtMs && reader.file.sizeBytes === version.sizeBytes;
}

function unavailable(e: unknown): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'The index of that moment cannot be rebuilt from the history; current answers are unaffected', { reason: (e as Error).message });
}

const pastServings = new WeakMap<ServingHolder, PastServing>();

/** The one PastServing of a serving holder and its history. */
export function pastServingOf(serving: ServingHolder, history: PastIndexes): PastServing {
  let p = pastServings.get(serving);
  if (p === undefined) pastServings.set(serving, (p = new PastServing(serving, history)));
  return p;
}
