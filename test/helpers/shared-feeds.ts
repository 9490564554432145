/**
 * The real feed snapshots beside the repository (../shared/feeds), which a
 * clone does not have. Tests that check real-data truth run only where they
 * are; elsewhere they are skipped with one line saying why, except under
 * CI=true, where a missing folder fails them (a CI run must test them).
 */
import { describe, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { relative, resolve } from 'node:path';

/** Directory of the real feed snapshots (not part of the repository). */
export const SHARED_FEEDS_DIR = resolve(import.meta.dir, '../../../shared/feeds');

/** Whether the real snapshots are present. */
export const hasSharedFeeds = existsSync(resolve(SHARED_FEEDS_DIR, 'feeds.json'));

const isCi = () => ['1', 'true', 'yes'].includes((process.env.CI ?? '').toLowerCase());
const announced = new Set<string>();

/** Whether tests needing the snapshots run here; prints the skip line once per `what` when they do not. */
function sharedRuns(what: string): boolean {
  if (hasSharedFeeds || isCi()) return true;
  if (!announced.has(what)) {
    announced.add(what);
    console.warn(`skipped: ${what}: needs the real feed snapshots in ${relative(process.cwd(), SHARED_FEEDS_DIR)} (absent here; CI=true makes this a failure)`);
  }
  return false;
}

/** Fails at once when the snapshots are missing (run only under CI=true, where a missing folder is an error). */
export function requireSharedFeeds(): void {
  if (!hasSharedFeeds) throw new Error(`CI=true and the real feed snapshots are missing: ${SHARED_FEEDS_DIR}`);
}

/** A describe() whose tests read the real snapshots: skipped without them, failing under CI=true without them. */
export function describeWithShared(name: string, body: () => void): void {
  if (!sharedRuns(name)) return void describe.skip(name, body);
  describe(name, () => {
    if (!hasSharedFeeds) test('the real feed snapshots are present', requireSharedFeeds);
    else body();
  });
}

/** A test() that reads the real snapshots (see describeWithShared). */
export function testWithShared(name: string, fn: () => unknown, timeout?: number): void {
  if (!sharedRuns(name)) return void test.skip(name, fn as () => void);
  test(name, hasSharedFeeds ? (fn as () => void) : requireSharedFeeds, timeout);
}
