/** `bun run start`: serve the API (building the default index first when missing); the binary's `serve`. */
import { main } from './cli.ts';

const code = await main(['serve']);
process.exit(code);
