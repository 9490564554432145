/**
 * What every command does with its arguments before its own checks: argv
 * parsed by node:util parseArgs, a parse error printed with the usage (exit
 * 2), --help printing the usage (exit 0).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Parsed<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

/** argv parsed by `config`, or the exit code once a parse error or --help has been answered. */
export function parseCommandLine<T extends ParseArgsConfig>(config: T, usage: string): Parsed<T> | number {
  let parsed: Parsed<T>;
  try {
    parsed = parseArgs(config);
  } catch (e) {
    console.error(`${(e as Error).message}\n${usage}`);
    return 2;
  }
  if ((parsed.values as { help?: unknown }).help) {
    console.log(usage);
    return 0;
  }
  return parsed;
}
