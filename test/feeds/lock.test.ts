/** The refresh lock file: one holder per host, dead or abandoned holders taken over. */
import { afterAll, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireLock, STALE_LOCK_MS } from '../../src/feeds/lock.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('a free lock is taken and released; a second taker in the same round is refused while it is held by a live process', async () => {
  const path = join(dir, 'a.lock');
  const release = acquireLock(path);
  expect(release).not.toBeNull();
  expect(existsSync(path)).toBe(true);
  release!();
  expect(existsSync(path)).toBe(false);

  const other = Bun.spawn(['sleep', '30']);
  try {
    writeFileSync(path, JSON.stringify({ pid: other.pid, at: Date.now() }));
    expect(acquireLock(path)).toBeNull();
    // Held too long: a stuck holder does not block refreshes for ever.
    writeFileSync(path, JSON.stringify({ pid: other.pid, at: Date.now() - STALE_LOCK_MS - 1 }));
    expect(acquireLock(path)).not.toBeNull();
  } finally {
    other.kill();
    await other.exited;
  }
});

test("a dead process's lock is taken over", async () => {
  const path = join(dir, 'b.lock');
  const gone = Bun.spawn(['true']);
  await gone.exited;
  writeFileSync(path, JSON.stringify({ pid: gone.pid, at: Date.now() }));
  const release = acquireLock(path);
  expect(release).not.toBeNull();
  release!();
});

test('an empty lock file is being written: respected while new, taken when old', () => {
  const path = join(dir, 'c.lock');
  writeFileSync(path, '');
  expect(acquireLock(path)).toBeNull();
  const old = (Date.now() - 60_000) / 1000;
  utimesSync(path, old, old);
  expect(acquireLock(path)).not.toBeNull();
});
