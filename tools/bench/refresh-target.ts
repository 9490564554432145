/**
 * The server for refresh-build.bench.ts: the real server over IPINTEL_INDEX
 * (limits off) whose feed refresher starts on SIGUSR2, so the bench measures
 * serving alone first. Configured by the environment (IPINTEL_FEEDS_MANIFEST,
 * IPINTEL_FEEDS_MIRROR, IPINTEL_FEEDS_MEMORY_MB); BENCH_NO_DEFAULTS=1 builds
 * from the manifest only. Prints the port on stdout.
 */
import { loadConfig } from '../../src/config.ts';
import { startFeedRefresher } from '../../src/feeds/start.ts';
import { startServer } from '../../src/host/start-server.ts';

const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', IPINTEL_DB: ':memory:', IPINTEL_RATE_LIMITS: 'off' });
const server = await startServer(config);
console.log(server.port);
process.on('SIGUSR2', () => {
  server.services.feeds = startFeedRefresher(config, server.services.index, { withDefaults: process.env.BENCH_NO_DEFAULTS !== '1' });
});
