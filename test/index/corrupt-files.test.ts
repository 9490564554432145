/** Corrupt, truncated and foreign files are refused, each with its own message. */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IndexFileError, parseIndexBytes } from '../../src/index/map-index-file.ts';
import { IndexHolder } from '../../src/index/holder.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';
import { prng } from '../helpers/prng.ts';

let dir: string;
let good: string;
let bytes: Uint8Array;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ipintel-corrupt-'));
  good = join(dir, 'good.idx');
  copyFileSync(await fixtureIndexPath(), good);
  bytes = new Uint8Array(readFileSync(good));
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes a modified copy and returns the reason the reader gives. */
function refusal(name: string, data: Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, data);
  try {
    IndexReader.open(path);
  } catch (e) {
    expect(e).toBeInstanceOf(IndexFileError);
    return (e as IndexFileError).reason;
  }
  throw new Error(`${name} was accepted`);
}

/** The reason verification refuses bytes (in memory: the same checks the mapped path runs). */
function refusalOfBytes(name: string, data: Uint8Array): string {
  try {
    parseIndexBytes(name, data);
  } catch (e) {
    expect(e).toBeInstanceOf(IndexFileError);
    return (e as IndexFileError).reason;
  }
  throw new Error(`${name} was accepted`);
}

describe('index file verification', () => {
  test('the good file opens', () => {
    expect(IndexReader.open(good).lookup('8.8.8.8')).not.toBeNull();
  });

  test('a good file read into a Node Buffer verifies, and the Buffer is left as it was', () => {
    // Buffer.prototype.slice is a view, not a copy: zeroing the header's checksum field for the CRC must not reach the caller's bytes.
    const buffer = readFileSync(good);
    const before = Buffer.from(buffer);
    expect(parseIndexBytes(good, buffer).sizeBytes).toBe(buffer.length);
    expect(buffer.equals(before)).toBe(true);
  });

  test('wrong magic', () => {
    const b = bytes.slice();
    b.set(new TextEncoder().encode('MMDBXXXX'), 0);
    expect(refusal('magic.idx', b)).toMatch(/^wrong magic/);
  });

  test('wrong version', () => {
    const b = bytes.slice();
    new DataView(b.buffer).setUint32(8, 99, true);
    expect(refusal('version.idx', b)).toMatch(/^unsupported format version 99/);
  });

  test('truncated file', () => {
    expect(refusal('truncated.idx', bytes.slice(0, bytes.length - 1000))).toMatch(/^truncated: section \w{4} ends at/);
    expect(refusal('tiny.idx', bytes.slice(0, 20))).toMatch(/^truncated: 20 bytes/);
    expect(refusal('empty.idx', new Uint8Array(0))).toMatch(/^truncated: 0 bytes/);
  });

  test('a flipped byte anywhere is detected (header, directory, every section, padding)', () => {
    const rand = prng(7);
    const headerLen = new DataView(bytes.buffer).getUint32(12, true);
    const positions = [9, 20, 70, headerLen - 1, headerLen, bytes.length - 1];
    for (let i = 0; i < 24; i++) positions.push(Math.floor(rand() * bytes.length));
    const reasons = new Set<string>();
    for (const pos of positions) {
      const b = bytes.slice();
      b[pos] ^= 0x40;
      const reason = refusalOfBytes(`flip-${pos}.idx`, b);
      reasons.add(reason.split(':')[0]);
    }
    expect([...reasons].some((r) => r.startsWith('checksum mismatch in section'))).toBe(true);
    expect(reasons.has('header checksum mismatch')).toBe(true);
  }, 60_000);

  test('trailing bytes after the last section', () => {
    const b = new Uint8Array(bytes.length + 8);
    b.set(bytes);
    expect(refusal('trailing.idx', b)).toMatch(/trailing bytes/);
  });

  test('a missing file is a clear error', () => {
    expect(() => IndexReader.open(join(dir, 'nope.idx'))).toThrow(/cannot open/);
  });

  test('reload of a corrupt file keeps the old index serving', () => {
    const live = join(dir, 'live.idx');
    copyFileSync(good, live);
    const holder = IndexHolder.open(live);
    const before = holder.current;
    const b = bytes.slice();
    b[b.length - 3] ^= 1;
    writeFileSync(live, b);
    expect(() => holder.reload()).toThrow(IndexFileError);
    expect(holder.current).toBe(before);
    expect(holder.current.lookup('1.1.1.1')).not.toBeNull();
    expect(holder.generation).toBe(1);
  });
});
