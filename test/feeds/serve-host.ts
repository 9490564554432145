/**
 * One server process as `serve` starts it (src/host/serve-host.ts: one thread or
 * a worker pool, one refresher in this primary thread), for the tests that
 * need real processes. Builds from the feeds only (no default data, to keep
 * builds small) and runs the refresher's timers fast, from TEST_* variables.
 * Prints `listening <url>` on stdout. TEST_REJECT_AFTER_MS: a timer then
 * rejects a promise and another throws, as a task that forgot its catch.
 */
import { loadConfig } from '../../src/config.ts';
import { installProcessGuards } from '../../src/host/process-guards.ts';
import { startHost } from '../../src/host/serve-host.ts';

installProcessGuards();
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const config = loadConfig();
const host = await startHost(config, {
  withDefaults: false,
  pickupMs: env('TEST_PICKUP_MS', 200),
  limits: { timeoutMs: 20_000, maxBytes: 64 * 1048576, connectTimeoutMs: 20_000 },
  retryBaseMs: env('TEST_RETRY_MS', 300_000),
  heartbeatMs: env('TEST_HEARTBEAT_MS', 10_000),
  lockLapseMs: env('TEST_LOCK_LAPSE_MS', 60_000),
});
console.log(`listening http://127.0.0.1:${host.port}`);
if (process.env.TEST_REJECT_AFTER_MS) {
  const after = Number(process.env.TEST_REJECT_AFTER_MS);
  setTimeout(() => void Promise.reject(new Error('a rejected promise from a timer')), after);
  setTimeout(() => {
    throw new Error('an exception thrown by a timer');
  }, after + 50);
}
process.on('SIGTERM', async () => {
  await host.stop();
  process.exit(0);
});
