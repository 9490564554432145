/**
 * The puller's status as a small file beside the pulled index: the puller
 * runs once per host (in the primary), and every worker's /v1/data/status and
 * /metrics read it from there.
 */
import { readFileSync, statSync } from 'node:fs';
import { writeTextAtomically } from '../../file-io/atomic-text.ts';

/** The history part of the pull status (null: IPINTEL_HISTORY=off). */
export interface HistoryPullStatus {
  /** sha256 of the publisher's history manifest adopted last (null: none yet, or the publisher publishes none). */
  adopted_sha256: string | null;
  versions: number;
  last_adopted: string | null;
  /** Why the publisher's history was refused last (null once one is adopted); /v1/data/status shows it as the history's error (admin). */
  last_error: string | null;
  last_error_at: string | null;
  /** Bytes the history pulls downloaded since this process started (failed attempts too). */
  downloaded_bytes: number;
}

/** What the status route shows of the puller. */
export interface PullStatus {
  source: 'pull';
  url: string;
  /** ISO times; null until it happened. */
  last_check: string | null;
  last_change: string | null;
  last_error: string | null;
  last_error_at: string | null;
  /** The manifest of the index served (null before the first verified pull). */
  sha256: string | null;
  built_at: string | null;
  /** When the served index passes IPINTEL_INDEX_MAX_AGE (null before the first verified pull). */
  expires_at: string | null;
  next_check: string | null;
  consecutive_failures: number;
  /** Polls by outcome since this process started. */
  polls: Record<PollOutcome, number>;
  /** How the last new index arrived (null before the first): the way, what that pull downloaded, why cheaper ways were not used. */
  last_transfer: LastTransfer | null;
  /** Bytes downloaded since this process started (failed attempts too), by way. */
  downloaded_bytes: Record<TransferMethod, number>;
  /** New indexes swapped in since this process started, by the way they arrived. */
  updates_by: Record<TransferMethod, number>;
  /** The publisher's history this server follows (null: IPINTEL_HISTORY=off; absent in a status file of an older version). */
  history?: HistoryPullStatus | null;
}

/** How a new index arrived (src/index/pull/index-transfer.ts), cheapest first. */
export const TRANSFER_METHODS = ['delta', 'compressed', 'plain'] as const;
export type TransferMethod = (typeof TRANSFER_METHODS)[number];

/** The last pull that swapped in a new index. */
export interface LastTransfer {
  method: TransferMethod;
  downloaded_bytes: number;
  /** The index's own size, for the ratio. */
  index_bytes: number;
  fallbacks: string[];
}

/** Outcome of one poll. */
export type PollOutcome = 'not_modified' | 'unchanged' | 'updated' | 'failed';

/** The status file of the index pulled to `localPath`. */
function pullStatusPath(localPath: string): string {
  return `${localPath}.pull-status.json`;
}

/** Writes the status atomically; a failure is ignored (status is advisory, serving goes on). */
export function writePullStatus(localPath: string, status: PullStatus): void {
  try {
    writeTextAtomically(pullStatusPath(localPath), JSON.stringify(status));
  } catch {}
}

let cached: { path: string; mtimeMs: number; status: PullStatus | null } | null = null;

/** The last status written for `localPath` (re-read only when the file changed); null before the first poll. */
export function readPullStatus(localPath: string): PullStatus | null {
  const path = pullStatusPath(localPath);
  let mtimeMs: number;
  try {
    mtimeMs = statSync(path).mtimeMs;
  } catch {
    return null;
  }
  if (cached && cached.path === path && cached.mtimeMs === mtimeMs) return cached.status;
  let status: PullStatus | null = null;
  try {
    status = JSON.parse(readFileSync(path, 'utf8')) as PullStatus;
  } catch {}
  cached = { path, mtimeMs, status };
  return status;
}
