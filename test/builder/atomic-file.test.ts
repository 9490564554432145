/** The atomic writer writes in aligned blocks (so the page cache can hold the index in 2 MiB folios) and loses no byte doing it. */
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AtomicFileWriter, BlockStream, WRITE_BLOCK, writeFileAtomic } from '../../src/file-io/atomic-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-atomic-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
};

test('blocks hold the chunks bytes in order; every block but the last is exactly the block size', () => {
  const chunkArb = fc.uint8Array({ maxLength: 70 });
  fc.assert(
    fc.property(fc.array(chunkArb, { maxLength: 12 }), fc.integer({ min: 1, max: 32 }), (chunks, size) => {
      // Copied as they come: a block is only valid during the call.
      const blocks: Uint8Array[] = [];
      const stream = new BlockStream((b, i) => {
        expect(i).toBe(blocks.length);
        blocks.push(b.slice());
      }, size);
      for (const c of chunks) stream.write(c);
      stream.end();
      expect(concat(blocks)).toEqual(concat(chunks));
      blocks.slice(0, -1).forEach((b) => expect(b.length).toBe(size));
      if (blocks.length > 0) {
        expect(blocks.at(-1)!.length).toBeGreaterThan(0);
        expect(blocks.at(-1)!.length).toBeLessThanOrEqual(size);
      }
    }),
    { numRuns: 2000 },
  );
});

test('the index writer writes 2 MiB blocks: a file of many odd-sized chunks comes back byte for byte', () => {
  expect(WRITE_BLOCK).toBe(2 * 1024 * 1024);
  let seed = 1;
  const chunks: Uint8Array[] = [];
  for (const len of [3, WRITE_BLOCK - 1, 5, 3 * WRITE_BLOCK + 7, 0, 100_000]) {
    const c = new Uint8Array(len);
    for (let i = 0; i < len; i++) c[i] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
    chunks.push(c);
  }
  const path = join(dir, 'blocks.bin');
  writeFileAtomic(path, chunks);
  expect(new Uint8Array(readFileSync(path))).toEqual(concat(chunks));
});

test('a held first block takes the head written last (an index header known only at the end)', () => {
  const body = new Uint8Array(2 * WRITE_BLOCK + 12345).map((_, i) => i % 251);
  for (const len of [100, body.length]) {
    const path = join(dir, `head-${len}.bin`);
    const out = new AtomicFileWriter(path, true);
    out.write(new Uint8Array(16));
    out.write(body.subarray(0, len));
    out.finish(new Uint8Array(16).fill(7));
    const expected = concat([new Uint8Array(16).fill(7), body.subarray(0, len)]);
    expect(new Uint8Array(readFileSync(path))).toEqual(expected);
  }
});
