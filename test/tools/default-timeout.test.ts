/** The suite's default per-test bound (test/helpers/default-timeout.ts, preloaded by bunfig.toml) is in force. */
import { expect, test } from 'bun:test';

test('a test with no timeout of its own may run past Bun’s 5 s default', async () => {
  const started = performance.now();
  await Bun.sleep(5_200);
  expect(performance.now() - started).toBeGreaterThanOrEqual(5_000);
});
