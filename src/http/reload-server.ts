/**
 * Reloading the index file and the decision policy of one server thread:
 * both are loaded first and swapped only when both are good, so a bad file
 * changes nothing. `/reload` runs it here, or in every worker through the
 * primary (src/host/workers/) when the host serves with several.
 */
import { IndexFileError } from '../index/map-index-file.ts';
import { loadPolicy, type PolicyError } from '../scoring/index.ts';
import { ApiError } from '../api-error.ts';
import type { ReloadBody } from '../contract/service.ts';
import type { OverridesLoad } from '../lookup/overrides/holder.ts';
import type { AppServices } from './services.ts';

/**
 * Reloads this thread's index and policy, and re-reads the overrides file
 * (off this thread), unless `overrides` says how the host's one read went (a
 * worker: the primary read it and handed every worker the table first);
 * `generation` numbers the new index (default: the next one). Throws
 * ApiError INVALID_REQUEST when refused.
 */
export async function reloadLocally(services: AppServices, generation?: number, overrides?: OverridesLoad | null): Promise<ReloadBody> {
  let policy = services.policy.current;
  try {
    if (services.policy.path) policy = await loadPolicy(services.policy.path);
  } catch (e) {
    throw new ApiError('INVALID_REQUEST', `Policy refused, nothing reloaded: ${(e as PolicyError).message}`, { what: 'policy' });
  }
  let index;
  try {
    index = services.index.reload(undefined, generation);
  } catch (e) {
    if (e instanceof IndexFileError) throw new ApiError('INVALID_REQUEST', `Index refused, the previous index keeps serving: ${e.reason}`, { what: 'index' });
    throw e;
  }
  // A new serving snapshot, with new memos: answers made under the old policy are not served again.
  services.serving.setPolicy(policy);
  // A refused overrides file keeps the overrides in force and refuses nothing else (the answer says so).
  const o = services.overrides.path === null ? null : (overrides ?? (await services.overrides.reloadOffThread()));
  return {
    reloaded: true,
    index: { built_at: index.builtAt, v4_intervals: index.v4Intervals, v6_intervals: index.v6Intervals, records: index.records, size_bytes: index.sizeBytes, generation: index.generation },
    policy_version: policy.policy_version,
    ...(o === null ? {} : { overrides: { applied: o.applied, entries: o.entries, bad_lines: o.badLines, refused: o.refused, generation: o.generation, ...(o.covers ? { covers: { ipv4_addresses: o.covers.ipv4Addresses, ipv4_share: o.covers.ipv4Share, ipv6_share: o.covers.ipv6Share } } : {}) } }),
  };
}

/** Reloads what this server serves: every worker of the host when there are several (through the primary), else this thread. What /reload and an in-process refresher call. */
export function reloadServer(services: AppServices): Promise<ReloadBody> {
  return services.host ? services.host.reloadAll() : reloadLocally(services);
}
