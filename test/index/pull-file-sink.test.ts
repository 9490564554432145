/** A pulled file is written in aligned 2 MiB blocks, as the builder writes one, so the page cache holds it in 2 MiB folios. */
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../../src/file-io/atomic-file.ts';
import { fileSink } from '../../src/index/pull/index-transfer.ts';
import { prng } from '../helpers/prng.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-pull-sink-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** KiB of `path` this process maps with 2 MiB page entries, after touching every page of a fresh private mapping (null: no /proc). */
function pmdMappedKiB(path: string): number | null {
  const data = Bun.mmap(path, { shared: false });
  let sum = 0;
  for (let i = 0; i < data.length; i += 4096) sum += data[i];
  let smaps: string;
  try {
    smaps = readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return null;
  }
  let inFile = false;
  let kib = 0;
  for (const line of smaps.split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inFile = line.endsWith(` ${path}`);
    else if (inFile) kib += Number(/^FilePmdMapped:\s+(\d+) kB$/.exec(line)?.[1] ?? 0);
  }
  return sum >= 0 ? kib : kib; // `sum` keeps the page reads from being optimised away
}

test('a body that came in small odd-sized chunks is written byte for byte, and mapped like a file written in 2 MiB blocks', () => {
  const rand = prng(7);
  const bytes = new Uint8Array(16 * 1024 * 1024 + 12_345);
  for (let i = 0; i < bytes.length; i += 4) bytes[i] = rand() * 256;
  const pulled = join(dir, 'pulled.idx');
  const sink = fileSink(pulled);
  for (let at = 0; at < bytes.length; ) {
    const n = Math.min(bytes.length - at, 1 + Math.floor(rand() * 70_000)); // an HTTP body's chunks
    sink.write(bytes.subarray(at, at + n));
    at += n;
  }
  sink.close(true);
  expect(Buffer.from(readFileSync(pulled)).equals(Buffer.from(bytes))).toBe(true);

  // The control: the same bytes written by the builder's writer. Where this kernel keeps no large folios for it, there is nothing to compare.
  const control = join(dir, 'control.idx');
  writeFileAtomic(control, bytes);
  const controlKiB = pmdMappedKiB(control);
  if (!controlKiB) {
    console.warn(`this kernel maps the builder's file with no 2 MiB entries (${controlKiB}); only the bytes were checked`);
    return;
  }
  expect(pmdMappedKiB(pulled)).toBe(controlKiB);
});
