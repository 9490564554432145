/**
 * `bun run diff OLD.idx NEW.idx [--format text|json] [--field a,b] [--top N]`:
 * what changed between two index files, per field group, in IPv4 addresses
 * and IPv6 /64s, with the largest changed ranges (src/lookup/diff/).
 */
import { DIFF_FIELDS, type DiffField } from '../contract/diff.ts';
import { IndexFileError } from '../index/index-file.ts';
import { IndexReader } from '../index/reader.ts';
import { diffIndexes } from '../lookup/diff/sweep.ts';
import { parseCommandLine } from './command-line.ts';
import { diffText } from './diff/report.ts';

export const USAGE = `usage: bun run diff OLD.idx NEW.idx [--format text|json] [--field a,b] [--top N]

Compares two index files in one streaming pass and prints, per field group, how many IPv4 addresses and
IPv6 /64s changed, newly flagged and unflagged space per classification flag, and the largest changed
ranges with their value before and after.

  --format F   text (default) or json (the IndexDiff shape of src/contract/diff.ts)
  --field a,b  only these groups (repeatable): ${DIFF_FIELDS.join(', ')}
  --top N      largest changed ranges per group and family (default 10, at most 1000)

Exit status: 0 when compared, 1 when a file cannot be opened, 2 on usage errors.`;

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
    positionals.length !== 2 ? 'give two index files: OLD.idx NEW.idx'
    : args.format !== undefined && args.format !== 'text' && args.format !== 'json' ? `--format must be text or json, not ${args.format}`
    : unknown.length > 0 ? `unknown field group(s): ${unknown.join(', ')}`
    : args.top !== undefined && !/^[1-9][0-9]{0,3}$/.test(args.top) || Number(args.top ?? 10) > 1000 ? `--top must be a whole number 1..1000, not ${args.top}`
    : null;
  if (problem) {
    console.error(`${problem}\n${USAGE}`);
    return 2;
  }
  let readers: [IndexReader, IndexReader];
  try {
    readers = [IndexReader.open(positionals[0]), IndexReader.open(positionals[1])];
  } catch (e) {
    console.error(`diff: ${e instanceof IndexFileError ? e.message : (e as Error).message}`);
    return 1;
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

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
