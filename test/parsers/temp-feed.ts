/** Writing small feed files (fixtures, malformed input) into a temp folder for parser tests. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const dir = mkdtempSync(join(tmpdir(), 'parser-test-'));

/** Writes `lines` (joined with LF) to a temp file and returns its absolute path; `.gz` names are gzipped. */
export function tempFeed(name: string, lines: string[] | string): string {
  const text = Array.isArray(lines) ? lines.join('\n') + '\n' : lines;
  const path = join(dir, name);
  writeFileSync(path, name.endsWith('.gz') ? gzipSync(text) : text);
  return path;
}
