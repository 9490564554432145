/**
 * `bun run lookup <ip> [--fields a,b]` and `bun run lookup --stdin [--format
 * ndjson|csv] [--column N]`: the API's v1 object from the index file, without
 * a server (src/commands/lookup/answer.ts builds it as the route does).
 */
import { once } from 'node:events';
import { loadConfig } from '../config.ts';
import { ApiError } from '../api-error.ts';
import { invalidIp } from '../lookup/invalid-ip.ts';
import { DEFAULT_INDEX_PATH } from '../index/default-paths.ts';
import { IndexFileError } from '../index/map-index-file.ts';
import { OfflineLookup, parseFields } from './lookup/answer.ts';
import { parseCommandLine } from './command-line.ts';
import { lookupStream, type StreamCounts } from './lookup/stream.ts';
import { HistoryJobs } from '../index/history/jobs.ts';
import { PastIndexes } from '../index/history/past-indexes.ts';
import { versionForAt } from '../lookup/past-moment.ts';
import { pastServingOf } from '../lookup/past-serving.ts';

export const USAGE = `usage: bun run lookup <ip> [ip ...] [--fields a,b] [--index <file>] [--at <time>]
       bun run lookup --stdin [--format ndjson|csv] [--column N] [--fields a,b] [--index <file>] [--at <time>]

Prints the v1 object the API returns for each address (one JSON object a line), from the index file
(--index, else IPINTEL_INDEX, else ${DEFAULT_INDEX_PATH}), the policy (IPINTEL_POLICY, else the built-in one) and
the operator's overrides (IPINTEL_OVERRIDES), as the server answers.
No crawler DNS proof and no RDAP are asked for: is_verified_crawler is false, network.owner is the ASN's name.

  --fields a,b      the top-level fields to print (as the API's fields parameter)
  --stdin           read one address a line from standard input; bad lines are reported on standard error
                    with their line number and skipped; progress is shown when standard error is a terminal
  --column N        with --stdin: the address is field N (1-based) of a CSV line, or of a TSV line when the
                    first line holds a tab ("..." quoting is read)
  --format F        with --stdin: ndjson (default) or csv (a header, then one row an address: nested
                    objects' members as columns named field.key, arrays and deeper objects as JSON)
  --index <file>    the index file
  --at <time>       answer as of a past moment (a date, meaning 00:00:00 UTC, or an RFC 3339 time) from the
                    retained history (IPINTEL_HISTORY_DIR, else history/ beside the index), as ?at= does: the
                    answer adds as_of; a moment outside the history prints the API's error object

Exit status: 0 when every address was answered, 1 when one was not an IP address (or the index cannot be
opened), 2 on usage errors.`;

const OPTIONS = {
  fields: { type: 'string' },
  stdin: { type: 'boolean' },
  format: { type: 'string' },
  column: { type: 'string' },
  index: { type: 'string' },
  at: { type: 'string' },
  help: { type: 'boolean' },
} as const;

/** Runs the command with argv (after the command name); resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandLine({ args: argv, options: OPTIONS, strict: true, allowPositionals: true }, USAGE);
  if (typeof parsed === 'number') return parsed;
  const { values: args, positionals: ips } = parsed;
  const usage = usageError(args, ips);
  if (usage) {
    console.error(`${usage}\n${USAGE}`);
    return 2;
  }
  let fields: Set<string> | null;
  try {
    fields = parseFields(args.fields);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    console.error(JSON.stringify(e.toBody()));
    return 2;
  }
  let lookup: OfflineLookup;
  try {
    const env = loadConfig();
    lookup = await OfflineLookup.open(args.index ?? env.indexPath, env.policyPath ?? undefined, env.overridesPath);
  } catch (e) {
    console.error(`lookup: ${e instanceof IndexFileError ? e.message : (e as Error).message}`);
    return 1;
  }
  if (args.at !== undefined) {
    const refused = await setPast(lookup, args.at, args.index ?? null);
    if (refused !== 0) return refused;
  }
  if (!args.stdin) return answerArguments(lookup, ips, fields);
  const counts = await lookupStream(lookup, Bun.stdin.stream(), {
    format: (args.format ?? 'ndjson') as 'ndjson' | 'csv',
    column: args.column === undefined ? null : Number(args.column),
    fields,
    write: writeStdout,
    reportBad: (message) => process.stderr.write(`${message}\n`),
    progress: process.stderr.isTTY ? progressLine() : undefined,
  });
  if (process.stderr.isTTY) process.stderr.write('\n');
  return counts.bad > 0 ? 1 : 0;
}

/** Makes every answer of `lookup` one as of `at` (the history next to the index named, else the configured one); prints the API's error object and returns 1 when it cannot. */
async function setPast(lookup: OfflineLookup, at: string, indexArg: string | null): Promise<number> {
  const env = loadConfig(indexArg === null ? process.env : { ...process.env, IPINTEL_INDEX: indexArg });
  const history = env.history ? new PastIndexes(env.history, new HistoryJobs()) : undefined;
  try {
    const { atMs, version, newest } = versionForAt(history, at, Date.now());
    const snapshot = await pastServingOf(lookup.serving, history!).snapshotOf(version, atMs, newest);
    lookup.past = { atMs, version, snapshot };
    return 0;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    console.error(JSON.stringify(e.toBody()));
    return 1;
  } finally {
    history?.close();
  }
}

/** Why the options do not go together, or null. */
function usageError(args: { stdin?: boolean; format?: string; column?: string }, ips: string[]): string | null {
  if (args.stdin && ips.length > 0) return 'give addresses as arguments or --stdin, not both';
  if (!args.stdin && ips.length === 0) return 'give an address, or --stdin';
  if (!args.stdin && (args.format !== undefined || args.column !== undefined)) return '--format and --column apply to --stdin';
  if (args.format !== undefined && args.format !== 'ndjson' && args.format !== 'csv') return `--format must be ndjson or csv, not ${args.format}`;
  if (args.column !== undefined && !/^[1-9][0-9]{0,5}$/.test(args.column)) return `--column must be a field number from 1, not ${args.column}`;
  return null;
}

/** Addresses given as arguments: one line each; an invalid one prints the API's INVALID_IP error object on stderr. */
function answerArguments(lookup: OfflineLookup, ips: string[], fields: ReadonlySet<string> | null): number {
  let code = 0;
  for (const ip of ips) {
    const body = lookup.answer(ip, fields);
    if (body === null) {
      console.error(JSON.stringify(invalidIp(ip).toBody()));
      code = 1;
    } else console.log(body);
  }
  return code;
}

/** Writes to stdout, waiting for it to drain when its buffer is full (constant memory on a slow reader). */
async function writeStdout(text: string): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

/** A progress reporter for a terminal: counts and rate on one rewritten line, at most once a second. */
function progressLine(): (counts: StreamCounts) => void {
  const started = performance.now();
  let last = 0;
  return (c) => {
    const now = performance.now();
    if (now - last < 1000) return;
    last = now;
    const rate = Math.round(c.lines / Math.max((now - started) / 1000, 0.001));
    process.stderr.write(`\r${c.lines} lines, ${c.answered} answered, ${c.bad} bad, ${rate}/s   `);
  };
}
