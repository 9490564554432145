/**
 * One server process with its feed refresher, as `bun run start` wires it,
 * for the multi-process test: builds from the feeds only (no default data,
 * to keep the test small) and looks for other processes' builds often.
 * Prints `listening <url>` on stdout.
 */
import { loadConfig } from '../../src/config.ts';
import { startFeedRefresher } from '../../src/feeds/start.ts';
import { startServer } from '../../src/server.ts';

const config = loadConfig();
const server = await startServer(config);
console.log(`listening ${server.url}`);
server.services.feeds = startFeedRefresher(config, server.services.index, {
  withDefaults: false,
  pickupMs: 200,
  limits: { timeoutMs: 5_000, maxBytes: 64 * 1048576, connectTimeoutMs: 1_000 },
  // Test pacing (the defaults are minutes): a held lock is retried, and a lapsed one taken over, within seconds.
  retryBaseMs: Number(process.env.TEST_RETRY_MS ?? 300_000),
  heartbeatMs: Number(process.env.TEST_HEARTBEAT_MS ?? 10_000),
  lockLapseMs: Number(process.env.TEST_LOCK_LAPSE_MS ?? 60_000),
});
process.on('SIGTERM', async () => {
  await server.stop();
  process.exit(0);
});
