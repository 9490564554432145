/**
 * Reloading the index file and the decision policy of one server thread:
 * both are loaded first and swapped only when both are good, so a bad file
 * changes nothing. `/reload` runs it here, or in every worker through the
 * primary (src/workers/) when the host serves with several.
 */
import { IndexFileError } from '../index/index-file.ts';
import { loadPolicy, type PolicyError } from '../scoring/index.ts';
import { ApiError } from '../errors.ts';
import type { ReloadBody } from '../contract/service.ts';
import type { AppServices } from './services.ts';

/** The /reload answer (declared in src/contract/service.ts). */
export type ReloadAnswer = ReloadBody;

/** Reloads this thread's index and policy; `generation` numbers the new index (default: the next one). Throws ApiError INVALID_REQUEST when refused. */
export async function reloadLocally(s: AppServices, generation?: number): Promise<ReloadAnswer> {
  let policy = s.policy.current;
  try {
    if (s.policy.path) policy = await loadPolicy(s.policy.path);
  } catch (e) {
    throw new ApiError('INVALID_REQUEST', `Policy refused, nothing reloaded: ${(e as PolicyError).message}`, { what: 'policy' });
  }
  let index;
  try {
    index = s.index.reload(undefined, generation);
  } catch (e) {
    if (e instanceof IndexFileError) throw new ApiError('INVALID_REQUEST', `Index refused, the previous index keeps serving: ${e.reason}`, { what: 'index' });
    throw e;
  }
  s.policy.current = policy;
  // A refused overrides file keeps the overrides in force and refuses nothing else (the answer says so).
  const o = s.overrides.path === null ? null : s.overrides.reload();
  return {
    reloaded: true,
    index: { built_at: index.builtAt, v4_intervals: index.v4Intervals, v6_intervals: index.v6Intervals, records: index.records, size_bytes: index.sizeBytes, generation: index.generation },
    policy_version: policy.policy_version,
    ...(o === null ? {} : { overrides: { applied: o.applied, entries: o.entries, bad_lines: o.badLines, refused: o.refused, generation: o.generation } }),
  };
}

/** Reloads what this server serves: every worker of the host when there are several (through the primary), else this thread. What /reload and an in-process refresher call. */
export function reloadServer(s: AppServices): Promise<ReloadAnswer> {
  return s.host ? s.host.reloadAll() : reloadLocally(s);
}
