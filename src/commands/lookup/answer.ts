/**
 * The v1 object of an address without a server: the same index reader,
 * scoring context, policy and body functions the lookup route uses
 * (src/http/v1-pipeline.ts), so `bun run lookup` prints the API's bytes.
 */
import { IndexHolder } from '../../index/holder.ts';
import { parseProjection } from '../../lookup/projection.ts';
import { V1BodyCache, v1BodyText } from '../../lookup/v1-body.ts';
import type { V1Context } from '../../lookup/v1.ts';
import { loadPolicy, type Policy } from '../../scoring/index.ts';
import { OverridesHolder } from '../../lookup/overrides/holder.ts';
import { lookupAddress } from '../../lookup/overrides/overlay.ts';

/** A parsed `--fields` value: null for the whole object (throws the API's INVALID_FIELDS ApiError). */
export function parseFields(fields: string | undefined): Set<string> | null {
  return parseProjection(fields === undefined ? {} : { fields }, 'free').fields;
}

/** Answers addresses from one index file, as the API would for an anonymous caller. */
export class OfflineLookup {
  private readonly bodies = new V1BodyCache();

  private constructor(
    readonly holder: IndexHolder,
    private readonly policy: Policy,
    readonly overrides: OverridesHolder,
  ) {}

  /**
   * Opens the index (IndexFileError when refused), the policy (PolicyError)
   * and the overrides file when one is named (bad lines and a refused file
   * are reported on stderr, as the server logs them).
   */
  static async open(indexPath: string, policyPath?: string, overridesPath: string | null = null): Promise<OfflineLookup> {
    return new OfflineLookup(IndexHolder.open(indexPath), await loadPolicy(policyPath), OverridesHolder.open(overridesPath));
  }

  /**
   * The v1 body as JSON text, or null when `ip` is not an address. No crawler
   * DNS proof (is_verified_crawler stays false, as in the API when the proof
   * fails) and no RDAP owner (the API uses one only when it has an RDAP answer
   * cached). The one place this module builds a body, through the function
   * the route's pipeline uses (v1BodyText).
   */
  answer(ip: string, fields: ReadonlySet<string> | null): string | null {
    const index = this.holder.current;
    const hit = lookupAddress(index, this.overrides.tableFor(index), ip);
    if (!hit) return null;
    const ctx: V1Context = {
      scoring: { verifiedCrawler: null, coverage: this.holder.coverage },
      policy: this.policy,
      rdapOwner: null,
      now: Date.now(),
      overridesGeneration: this.overrides.generation,
    };
    return v1BodyText(this.bodies, hit, ctx, fields);
  }
}
