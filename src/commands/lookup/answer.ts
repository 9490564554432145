/**
 * The v1 object of an address without a server: the same index reader,
 * scoring context, policy and body functions the lookup route uses
 * (src/lookup/answerer.ts), so `bun run lookup` prints the API's bytes.
 */
import { IndexHolder } from '../../index/holder.ts';
import { parseProjection } from '../../lookup/projection.ts';
import { ServingHolder } from '../../lookup/serving.ts';
import { loadPolicy } from '../../scoring/index.ts';
import { OverridesHolder } from '../../lookup/overrides/holder.ts';
import { lookupAddress } from '../../lookup/overrides/overlay.ts';
import { withAsOf, type PastMoment } from '../../lookup/past-moment.ts';

/** A parsed `--fields` value: null for the whole object (throws the API's INVALID_FIELDS ApiError). */
export function parseFields(fields: string | undefined): Set<string> | null {
  return parseProjection(fields === undefined ? {} : { fields }, 'free').fields;
}

/** Answers addresses from one index file, as the API would for an anonymous caller. */
export class OfflineLookup {
  private constructor(
    /** The index, policy and overrides, published as one serving snapshot as the server does. */
    readonly serving: ServingHolder,
  ) {}

  /** The past moment every answer is made as of (`--at`); null: the index file as it is. */
  past: PastMoment | null = null;

  /** The index holder. */
  get holder(): IndexHolder {
    return this.serving.index;
  }

  /** The overrides holder. */
  get overrides(): OverridesHolder {
    return this.serving.overrides;
  }

  /**
   * Opens the index (IndexFileError when refused), the policy (PolicyError)
   * and the overrides file when one is named (bad lines and a refused file
   * are reported on stderr, as the server logs them).
   */
  static async open(indexPath: string, policyPath?: string, overridesPath: string | null = null): Promise<OfflineLookup> {
    const holder = IndexHolder.open(indexPath);
    const policy = await loadPolicy(policyPath);
    return new OfflineLookup(new ServingHolder(holder, { current: policy, path: policyPath ?? null }, OverridesHolder.open(overridesPath)));
  }

  /**
   * The v1 body as JSON text, or null when `ip` is not an address. No crawler
   * DNS proof (is_verified_crawler stays false, as in the API when the proof
   * fails) and no RDAP owner (the API uses one only when it has an RDAP answer
   * cached). The one place this module builds a body, through the snapshot's
   * answerer the route's pipeline uses (src/lookup/answerer.ts).
   */
  answer(ip: string, fields: ReadonlySet<string> | null): string | null {
    const past = this.past;
    const snapshot = past?.snapshot ?? this.serving.snapshot;
    const hit = lookupAddress(snapshot.reader, snapshot.overrides, ip);
    if (!hit) return null;
    const body = snapshot.answers.v1WithoutLiveParts(hit, fields, past?.atMs ?? Date.now());
    return past ? withAsOf(body, past) : body;
  }
}
