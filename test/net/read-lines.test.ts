import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { readLines, readTail } from '../../src/file-io/read-lines.ts';

/** A stream giving `parts` as separate chunks. */
function streamOf(parts: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(enc.encode(p));
      c.close();
    },
  });
}

async function linesOf(parts: string[], max?: number): Promise<string[]> {
  const out: string[] = [];
  await readLines(streamOf(parts), (l) => out.push(l), max);
  return out;
}

describe('readLines', () => {
  test('lines split across chunks, the last one without a newline, empty lines dropped', async () => {
    expect(await linesOf(['{"a"', ':1}\n\n{"b":2}\n', 'tail'])).toEqual(['{"a":1}', '{"b":2}', 'tail']);
  });

  test('a line past the cap is skipped whole, in one chunk or many, and the next line is kept', async () => {
    const long = 'x'.repeat(50);
    expect(await linesOf([`a\n${long}\nb\n`], 10)).toEqual(['a', 'b']);
    expect(await linesOf(['a\n', long.slice(0, 20), long.slice(20), long, '\nb\n'], 10)).toEqual(['a', 'b']);
    expect(await linesOf(['a\n', long], 10)).toEqual(['a']);
  });
});

describe('readTail', () => {
  test('keeps only the last characters of a long stream', async () => {
    const parts = Array.from({ length: 100 }, (_, i) => `line ${i}\n`);
    const tail = await readTail(streamOf(parts), 16);
    expect(tail).toBe(parts.join('').slice(-16));
    expect(tail.endsWith('line 99\n')).toBe(true);
  });

  test('a short stream whole', async () => {
    expect(await readTail(streamOf(['ab', 'c']), 16)).toBe('abc');
  });
});
