/**
 * The puller's status as a small file beside the pulled index: the puller
 * runs once per host (in the primary), and every worker's /v1/data/status and
 * /metrics read it from there.
 */
import { readFileSync, statSync } from 'node:fs';
import { writeTextAtomically } from '../atomic-text.ts';

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
