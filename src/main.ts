/** `bun run start`: serve the API (building the default index first when missing). */
import { loadConfig } from './config.ts';
import { ensureIndex, startServer } from './server.ts';

const config = loadConfig();
await ensureIndex(config);
const server = await startServer(config);
console.error(`ipintel listening on ${config.host}:${server.port} (index ${config.indexPath})`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    await server.stop(); // flushes usage counters and closes the database
    process.exit(0);
  });
}
