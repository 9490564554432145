/**
 * `bun run tools/soak/soak.ts [--duration 60] [--concurrency 16] [--reload-every 5]
 *    [--rss-limit-mib 32] [--warmup 10] [--seed N] [--index-a a.idx --index-b b.idx] [--json out.json]`
 *
 * Soaks the real server (a child `bun run src/main.ts` on 127.0.0.1) with
 * mixed traffic while swapping and reloading the index; prints a summary and
 * exits 1 on any 5xx, dropped request, unexpected status, failed reload or
 * RSS growth above the limit (docs/reliability.md explains the bound).
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEFAULT_SOAK, runSoak } from './run-soak.ts';
import { formatSoakSummary } from './summary.ts';

const USAGE = 'usage: bun run tools/soak/soak.ts [--duration s] [--concurrency n] [--reload-every s] [--rss-limit-mib n] [--warmup s] [--seed n] [--index-a f --index-b f] [--json file]';

/** Parses a positive number option or exits with the usage line. */
function num(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) {
    console.error(`--${name} must be a positive number (got "${value}")\n${USAGE}`);
    process.exit(2);
  }
  return n;
}

let args;
try {
  args = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      duration: { type: 'string' },
      concurrency: { type: 'string' },
      'reload-every': { type: 'string' },
      'rss-limit-mib': { type: 'string' },
      warmup: { type: 'string' },
      seed: { type: 'string' },
      'index-a': { type: 'string' },
      'index-b': { type: 'string' },
      feeds: { type: 'string' },
      json: { type: 'string' },
      help: { type: 'boolean' },
    },
  }).values;
} catch (e) {
  console.error(`${(e as Error).message}\n${USAGE}`);
  process.exit(2);
}
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
if (Boolean(args['index-a']) !== Boolean(args['index-b'])) {
  console.error(`give both --index-a and --index-b, or neither\n${USAGE}`);
  process.exit(2);
}

const report = await runSoak({
  durationMs: num(args.duration, DEFAULT_SOAK.durationMs / 1000, 'duration') * 1000,
  concurrency: Math.round(num(args.concurrency, DEFAULT_SOAK.concurrency, 'concurrency')),
  reloadEveryMs: num(args['reload-every'], DEFAULT_SOAK.reloadEveryMs / 1000, 'reload-every') * 1000,
  rssLimitKiB: num(args['rss-limit-mib'], DEFAULT_SOAK.rssLimitKiB / 1024, 'rss-limit-mib') * 1024,
  rssWarmupMs: num(args.warmup, DEFAULT_SOAK.rssWarmupMs / 1000, 'warmup') * 1000,
  seed: Math.round(num(args.seed, DEFAULT_SOAK.seed, 'seed')),
  indexA: args['index-a'],
  indexB: args['index-b'],
  feedsDir: args.feeds,
  log: (line) => console.error(line),
});
console.log(formatSoakSummary(report));
if (args.json) writeFileSync(args.json, JSON.stringify(report, null, 2) + '\n');
process.exit(report.failures.length === 0 ? 0 : 1);
