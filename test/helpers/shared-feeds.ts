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

/** CI is set (as the Debian-package suites read it). */
const isCi = () => !!process.env.CI;
const announced = new Set<string>();

/** The test file calling into this module (from the stack), to say the skip once per file. */
function callerFile(): string {
  const frames = (new Error().stack ?? '').split('\n').map((l) => /\(?((?:\/|[A-Za-z]:)[^():]+\.ts)/.exec(l)?.[1]).filter((f): f is string => !!f);
  return frames.find((f) => !f.endsWith('shared-feeds.ts')) ?? 'a test file';
}

/** Whether tests needing the snapshots run here; prints the skip line once per test file when they do not. */
function sharedRuns(): boolean {
  if (hasSharedFeeds || isCi()) return true;
  const file = callerFile();
  if (!announced.has(file)) {
    announced.add(file);
    console.warn(`skipped: tests of ${relative(process.cwd(), file)} that read the real feed snapshots: ${relative(process.cwd(), SHARED_FEEDS_DIR)} is absent (CI=true makes this a failure)`);
  }
  return false;
}

/** Fails at once when the snapshots are missing (run only under CI=true, where a missing folder is an error). */
export function requireSharedFeeds(): void {
  if (!hasSharedFeeds) throw new Error(`CI=true and the real feed snapshots are missing: ${SHARED_FEEDS_DIR}`);
}

/** A describe() whose tests read the real snapshots: skipped without them, failing under CI=true without them. */
export function describeWithShared(name: string, body: () => void): void {
  // The body is not run at all without the snapshots: it may read them while its tests are collected.
  if (!sharedRuns()) return void describe(name, () => test.skip('reads the real feed snapshots', () => {}));
  describe(name, () => {
    if (!hasSharedFeeds) test('the real feed snapshots are present', requireSharedFeeds);
    else body();
  });
}

/** A test() that reads the real snapshots (see describeWithShared). */
export function testWithShared(name: string, fn: () => unknown, timeout?: number): void {
  if (!sharedRuns()) return void test.skip(name, fn as () => void);
  test(name, hasSharedFeeds ? (fn as () => void) : requireSharedFeeds, timeout);
}
