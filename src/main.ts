/** `bun run start`: serve the API (building the default index first when missing); the binary's `serve`. */
import { earlyWorkerCount } from './config-workers.ts';

const args = process.argv.slice(2);
// The worker threads start loading their code before this thread reads its configuration and loads its own (on two
// cores the second would otherwise idle meanwhile); the host takes them where the configuration agrees (serve-host.ts).
const early = args.length === 0 ? earlyWorkerCount(process.env) : 0;
if (early > 1) {
  const [{ startThreads }, { holdEarlyThreads }] = await Promise.all([import('./host/workers/threads.ts'), import('./host/workers/early-threads.ts')]);
  holdEarlyThreads(startThreads(early));
}
// The arguments go to `serve`, which prints its usage for --help and refuses others rather than serving.
const { main } = await import('./cli.ts');
const code = await main(['serve', ...args]);
process.exit(code);
