/**
 * `bun run diff OLD NEW [--format text|json] [--field a,b] [--top N]`:
 * what changed between two index files (or the indexes served at two past moments), per field group, in IPv4 addresses
 * and IPv6 /64s, with the largest changed ranges (src/lookup/diff/).
 */
import { DIFF_FIELDS, type DiffField } from '../contract/diff.ts';
import { IndexFileError } from '../index/map-index-file.ts';
import { IndexReader } from '../index/reader.ts';
import { existsSync } from 'node:fs';
import { loadConfig } from '../config.ts';
import { ApiError } from '../api-error.ts';
import { HistoryJobs } from '../index/history/jobs.ts';
import { PastIndexes } from '../index/history/past-indexes.ts';
import { versionForAt } from '../lookup/past-moment.ts';
import { diffIndexes } from '../lookup/diff/sweep.ts';
import { parseCommandLine } from './command-line.ts';
import { diffText } from './diff/report.ts';

export const USAGE = `usage: bun run diff OLD NEW [--format text|json] [--field a,b] [--top N]
       (OLD and NEW: index files, or moments (a date or an RFC 3339 time) of the retained history,
        IPINTEL_HISTORY_DIR, else history/ beside IPINTEL_INDEX: the index served at that moment)

Compares two index files in one streaming pass and prints, per field group, how many IPv4 addresses and
IPv6 /64s changed, newly flagged and unflagged space per classification flag, and the largest changed
ranges with their value before and after.

  --format F   text (default) or json (the IndexDiff shape of src/contract/diff.ts)
  --field a,b  only these groups (repeatable): ${DIFF_FIELDS.join(', ')}
  --top N      largest changed ranges per group and family (default 10, at most 1000)

Exit status: 0 when compared, 1 when a file cannot be opened, 2 on usage errors.`;

/** The index file named, or (a text that is no file but reads as a date or time) the index served at that moment; throws the API's errors for a moment outside the history. */
async function openIndexOrMoment(text: string, history: PastIndexes | undefined): Promise<IndexReader> {
  if (existsSync(text) || !/^\d{4}-\d{2}-\d{2}/.test(text)) return IndexReader.open(text);
  const { version } = versionForAt(history, text, Date.now());
  return history!.readerOf(version);
}

/** Runs the command with argv (after the command name); resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandLine(
    {
      args: argv,
      strict: true,
      allowPositionals: true,
      options: { format: { type: 'string' }, field: { type: 'string', multiple: true }, top: { type: 'string' }, help: { type: 'boolean' } },
    },
    USAGE,
  );
  if (typeof parsed === 'number') return parsed;
  const { values: args, positionals } = parsed;
  const fields = (args.field ?? []).flatMap((f) => f.split(',')).map((f) => f.trim()).filter(Boolean);
  const unknown = fields.filter((f) => !(DIFF_FIELDS as readonly string[]).includes(f));
  const problem =
    positionals.length !== 2 ? 'give two index files or two moments: OLD NEW'
    : args.format !== undefined && args.format !== 'text' && args.format !== 'json' ? `--format must be text or json, not ${args.format}`
    : unknown.length > 0 ? `unknown field group(s): ${unknown.join(', ')}`
    : args.top !== undefined && !/^[1-9][0-9]{0,3}$/.test(args.top) || Number(args.top ?? 10) > 1000 ? `--top must be a whole number 1..1000, not ${args.top}`
    : null;
  if (problem) {
    console.error(`${problem}\n${USAGE}`);
    return 2;
  }
  let readers: [IndexReader, IndexReader];
  const history = loadConfig().history;
  const past = history ? new PastIndexes(history, new HistoryJobs()) : undefined;
  try {
    readers = [await openIndexOrMoment(positionals[0], past), await openIndexOrMoment(positionals[1], past)];
  } catch (e) {
    console.error(`diff: ${e instanceof ApiError ? JSON.stringify(e.toBody()) : e instanceof IndexFileError ? e.message : (e as Error).message}`);
    return 1;
  } finally {
    past?.close();
  }
  const diff = diffIndexes(readers[0], readers[1], {
    fields: fields.length > 0 ? (fields as DiffField[]) : undefined,
    top: args.top === undefined ? undefined : Number(args.top),
    oldPath: positionals[0],
    newPath: positionals[1],
  });
  process.stdout.write(args.format === 'json' ? `${JSON.stringify(diff, null, 2)}\n` : diffText(diff));
  return 0;
}
