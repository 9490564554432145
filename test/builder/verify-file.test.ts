import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IndexFileWriter } from '../../index-builder/write/index-file-writer.ts';
import { verifySectionChecksums } from '../../index-builder/write/verify-file.ts';
import { FORMAT_VERSION, type IndexMeta } from '../../src/index/format.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-verify-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A small file of two sections (one of 100 bytes, so it has padding) and META. */
function writeSample(name: string): { path: string; second: number } {
  const path = join(dir, name);
  const w = new IndexFileWriter(path, 3);
  w.add('AAAA', new Uint8Array(100).fill(7));
  w.add('BBBB', new Uint8Array(3 * 1024 * 1024).map((_, i) => i & 0xff));
  w.finish({ formatVersion: FORMAT_VERSION } as IndexMeta, 0);
  // Header block, then AAAA (100 bytes padded to 128), then BBBB.
  const headerLen = new DataView(readFileSync(path).buffer).getUint32(12, true);
  return { path, second: headerLen + 128 };
}

function damage(path: string, at: number): void {
  const bytes = readFileSync(path);
  bytes[at] ^= 0xff;
  writeFileSync(path, bytes);
}

describe('verifySectionChecksums: the written file read back a section at a time', () => {
  test('a complete file passes', () => {
    expect(() => verifySectionChecksums(writeSample('good.idx').path)).not.toThrow();
  });

  test('a changed byte inside a section is found and named', () => {
    const { path, second } = writeSample('bad-section.idx');
    damage(path, second + 2 * 1024 * 1024);
    expect(() => verifySectionChecksums(path)).toThrow('checksum mismatch in section BBBB');
  });

  test('a non-zero byte in a section padding is found', () => {
    const { path, second } = writeSample('bad-padding.idx');
    damage(path, second - 1);
    expect(() => verifySectionChecksums(path)).toThrow('non-zero padding after section AAAA');
  });

  test('a truncated file is refused', () => {
    const { path } = writeSample('short.idx');
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, bytes.length - 4096));
    expect(() => verifySectionChecksums(path)).toThrow();
  });
});
