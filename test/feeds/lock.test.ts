/** The refresh lock file: one holder per host (threads of one process too), kept by a heartbeat, taken over only when it lapsed. */
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireLock, processStartedAt, readLock } from '../../src/feeds/lock.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LAPSE = 60_000;
/** Sets a file's mtime `ago` ms in the past. */
const age = (path: string, ago: number) => utimesSync(path, (Date.now() - ago) / 1000, (Date.now() - ago) / 1000);

test('a free lock is taken and released; a second taker in the same process (another thread) is refused while it is held', () => {
  const path = join(dir, 'a.lock');
  const lock = acquireLock(path, Date.now(), LAPSE);
  expect(lock).not.toBeNull();
  // Same pid, another taker: refused (threads share a pid; the token tells them apart).
  expect(acquireLock(path, Date.now(), LAPSE)).toBeNull();
  const written = JSON.parse(readFileSync(path, 'utf8'));
  expect(written.pid).toBe(process.pid);
  expect(written.token).toBe(lock!.holder.token);
  expect(written.token).toMatch(/^[0-9a-f]{24}$/);
  // The process start time names this process (within the tick of /proc): before now, after the machine booted.
  expect(written.processStartedAt).toBe(processStartedAt(process.pid));
  expect(written.processStartedAt).toBeLessThanOrEqual(Date.now());
  expect(Math.abs(written.processStartedAt - (Date.now() - performance.now()))).toBeLessThan(60_000);
  lock!.release();
  expect(existsSync(path)).toBe(false);
});

test('liveness is the heartbeat: a dead holder is not taken over before the lapse, a live process whose heartbeat lapsed is', async () => {
  const path = join(dir, 'b.lock');
  const gone = Bun.spawn(['true']);
  await gone.exited;
  writeFileSync(path, JSON.stringify({ pid: gone.pid, processStartedAt: null, token: 'x'.repeat(24), since: Date.now() }));
  // Its process is gone, but its child could still be at work until the heartbeat lapses.
  expect(acquireLock(path, Date.now(), LAPSE)).toBeNull();
  age(path, LAPSE - 5_000);
  expect(acquireLock(path, Date.now(), LAPSE)).toBeNull();
  // This very process "holds" it but stopped touching it (hung): taken over after the lapse.
  writeFileSync(path, JSON.stringify({ pid: process.pid, processStartedAt: processStartedAt(process.pid), token: 'y'.repeat(24), since: Date.now() - 3_600_000 }));
  age(path, LAPSE + 1);
  const lock = acquireLock(path, Date.now(), LAPSE);
  expect(lock).not.toBeNull();
  expect(JSON.parse(readFileSync(path, 'utf8')).token).toBe(lock!.holder.token);
  lock!.release();
});

test('a heartbeat keeps the lock; one taken over after a lapse reports lost, and its release leaves the new holder alone', () => {
  const path = join(dir, 'c.lock');
  const first = acquireLock(path, Date.now(), LAPSE)!;
  age(path, LAPSE + 1);
  expect(readLock(path, Date.now(), LAPSE)!.live).toBe(false);
  expect(first.heartbeat()).toBe(true);
  expect(readLock(path, Date.now(), LAPSE)!.live).toBe(true);
  expect(acquireLock(path, Date.now(), LAPSE)).toBeNull();
  age(path, LAPSE + 1);
  const second = acquireLock(path, Date.now(), LAPSE)!;
  expect(second).not.toBeNull();
  expect(first.heartbeat()).toBe(false);
  first.release();
  expect(existsSync(path)).toBe(true);
  expect(readLock(path, Date.now(), LAPSE)!.holder!.token).toBe(second.holder.token);
  second.release();
  expect(existsSync(path)).toBe(false);
});

test('an empty lock file is being written: respected while new, taken when its heartbeat lapsed', () => {
  const path = join(dir, 'd.lock');
  writeFileSync(path, '');
  expect(acquireLock(path, Date.now(), LAPSE)).toBeNull();
  age(path, LAPSE + 1);
  const lock = acquireLock(path, Date.now(), LAPSE);
  expect(lock).not.toBeNull();
  lock!.release();
});
