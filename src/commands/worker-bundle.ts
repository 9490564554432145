/**
 * `bun run bundle`: builds the worker thread's bytecode bundle for this tree
 * unless the current one exists (src/host/workers/worker-bundle.ts). Run by
 * `bun run start` first (its `prestart`); a failed build says why and exits 0 —
 * the server then loads the worker from the source, as it would without it.
 */
import { buildWorkerBundle } from '../host/workers/worker-bundle.ts';

const outcome = await buildWorkerBundle();
if (outcome.kind === 'failed') console.error(`worker bundle not built (workers will load from the source): ${outcome.message}`);
else if (outcome.kind === 'built' && !process.argv.includes('--quiet')) console.error(`worker bundle built: ${outcome.entry}`);
