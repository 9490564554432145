/** `bun run start`: serve the API (building the default index first when missing). */
import { loadConfig } from './config.ts';
import { ensureIndex, startServer, type RunningServer } from './server.ts';

let server: RunningServer;
try {
  const config = loadConfig();
  await ensureIndex(config);
  server = await startServer(config);
  console.error(`ipintel listening on ${config.host}:${server.port} (index ${config.indexPath})`);
} catch (e) {
  // One clear line (the index file, the database, the setting at fault), no stack trace.
  console.error(`ipintel cannot start: ${(e as Error).message}`);
  process.exit(1);
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    await server.stop(); // flushes usage counters and closes the database
    process.exit(0);
  });
}
