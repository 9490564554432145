/**
 * One serving snapshot: the index reader, its coverage, the decision policy
 * and the overrides table a request answers with, published together as one
 * immutable object. A request reads `ServingHolder.snapshot` once and keeps
 * it, so an answer that waits (a crawler's DNS proof) is still made with the
 * coverage and policy of the index its hit came from.
 *
 * The answer memos hang off the snapshot: a reload, a policy or overrides
 * change, or a source turning stale publishes a new snapshot, and with it
 * new, empty memos. Nothing compares identities to find out whether a memo
 * is still valid. A replaced snapshot is referenced by nothing but the
 * requests still on it, so its reader (and its mapping) can be released.
 */
import type { Coverage } from '../index/coverage.ts';
import type { IndexHolder } from '../index/holder.ts';
import type { IndexReader } from '../index/reader.ts';
import type { Policy } from '../scoring/index.ts';
import { SnapshotAnswerer } from './answerer.ts';
import { LegacyLines } from './legacy.ts';
import { DEFAULT_MEMO_SIZES, type MemoSizes } from './memo-sizes.ts';
import type { OverridesHolder } from './overrides/holder.ts';
import type { OverrideLookup } from './overrides/layered.ts';
import { V1BodyCache } from './v1-body.ts';

/** The decision policy in force, swappable by /reload. */
export interface PolicyHolder {
  current: Policy;
  /** Where a policy file came from (null: the built-in default). */
  path: string | null;
}


/** What every answer made under one snapshot shares, and the memos of those answers. */
export class ServingSnapshot {
  /** The v1 bodies of this snapshot's records (the memo starts empty with each snapshot). */
  readonly bodies: V1BodyCache;
  /** The legacy one-line texts of this snapshot's records. */
  readonly lines: LegacyLines;
  /** The one answerer of this snapshot (answerer.ts): every answer is made through it, with these memos. */
  readonly answers: SnapshotAnswerer;

  constructor(
    /** The index every lookup of this snapshot searches. */
    readonly reader: IndexReader,
    /** What that index holds and which of its kinds are stale. */
    readonly coverage: Coverage,
    /** The decision policy. */
    readonly policy: Policy,
    /** The overrides laid over every lookup (the file's and the index's own). */
    readonly overrides: OverrideLookup,
    /** Generation of the overrides file (metrics, logs). */
    readonly overridesGeneration: number,
    /** Generation of the index. */
    readonly generation: number,
    sizes: Readonly<MemoSizes> = DEFAULT_MEMO_SIZES,
  ) {
    this.bodies = new V1BodyCache(this, sizes.v1TailSlots, sizes.scoredViews);
    this.lines = new LegacyLines(reader, sizes.legacyLineSlots);
    this.answers = new SnapshotAnswerer(this.bodies, this.lines);
  }
}

/**
 * Publishes a new snapshot whenever one of its parts changes: the index
 * (reload, coverage refresh), the overrides file, or the policy (setPolicy).
 */
export class ServingHolder {
  /** The snapshot new requests answer with: read it once per request. */
  snapshot: ServingSnapshot;

  constructor(
    readonly index: IndexHolder,
    readonly policy: PolicyHolder,
    readonly overrides: OverridesHolder,
    private readonly sizes: Readonly<MemoSizes> = DEFAULT_MEMO_SIZES,
  ) {
    this.snapshot = this.compose();
    // Weakly: a holder whose services are dropped is not kept alive (with its memos) by a shared index or overrides holder.
    const self = new WeakRef(this);
    const republish = () => self.deref()?.publish();
    index.onChange(republish);
    overrides.onChange(republish);
  }

  /** Puts a new policy in force (a new snapshot). */
  setPolicy(policy: Policy): void {
    this.policy.current = policy;
    this.publish();
  }

  /** Publishes a snapshot of the parts in force now. */
  publish(): void {
    this.snapshot = this.compose();
  }

  private compose(): ServingSnapshot {
    const reader = this.index.current;
    return new ServingSnapshot(reader, this.index.coverage, this.policy.current, this.overrides.lookupFor(reader), this.overrides.generation, this.index.generation, this.sizes);
  }
}
