/** `bun run start`: serve the API (building the default index first when missing); the binary's `serve`. */
import { main } from './cli.ts';

// The arguments go to `serve`, which prints its usage for --help and refuses others rather than serving.
const code = await main(['serve', ...process.argv.slice(2)]);
process.exit(code);
