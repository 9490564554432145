import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { Writable } from 'node:stream';
import { writeOrWait } from '../../src/index/pull/write-or-wait.ts';

test('waiting on a full stream many times leaves no drain or close listener behind', async () => {
  const got: number[] = [];
  // A tiny buffer and a slow consumer: every write waits for a drain.
  const slow = new Writable({
    highWaterMark: 4,
    write(chunk: Buffer, _enc, done) {
      got.push(chunk.length);
      setTimeout(done, 1);
    },
  });
  const closeBefore = slow.listenerCount('close');
  const drainBefore = slow.listenerCount('drain');
  for (let i = 0; i < 40; i++) await writeOrWait(slow, new Uint8Array(16));
  expect(got.length).toBeGreaterThan(30);
  expect(slow.listenerCount('close')).toBe(closeBefore);
  expect(slow.listenerCount('drain')).toBe(drainBefore);
  slow.end();
});

test('a stream destroyed while a write waits ends the wait', async () => {
  const stuck = new Writable({ highWaterMark: 1, write() {} }); // never calls back: never drains
  const waiting = writeOrWait(stuck, new Uint8Array(8));
  stuck.destroy();
  await waiting;
  expect(stuck.destroyed).toBe(true);
});
