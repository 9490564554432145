/**
 * The environment defaults `bun run start` sets before the server starts
 * (its `NAME=${NAME:-value}` prefixes in package.json), so tools that start
 * the server some other way (benchmarks, the soak) run it as operators do.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const PACKAGE_JSON = join(import.meta.dir, '..', 'package.json');

/** `NAME -> value` for each `NAME=${NAME:-value}` at the start of the `start` script. */
export function startScriptDefaults(): Record<string, string> {
  const script: string = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')).scripts.start;
  const out: Record<string, string> = {};
  for (const m of script.matchAll(/(?:^|\s)([A-Z_][A-Z0-9_]*)=\$\{\1:-([^}]*)\}/g)) out[m[1]] = m[2];
  return out;
}

/** `env` with the start script's defaults added where `env` does not set them. */
export function withStartDefaults(env: Record<string, string | undefined>): Record<string, string | undefined> {
  return { ...startScriptDefaults(), ...Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) };
}
