/**
 * The index verified once per host (src/host/workers/verified-index.ts): a worker
 * skips hashing only the very file the primary verified; a file replaced or
 * rewritten since, or one the primary refused, it verifies itself.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IndexFileError } from '../../src/index/map-index-file.ts';
import { openVerifiedIndex, verifyForWorkers } from '../../src/host/workers/verified-index.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';

let dir: string;
let good: Uint8Array;
/** The good bytes with one byte in the middle of the file (inside a section) flipped: only a checksum sees it. */
let flipped: Uint8Array;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ipintel-verified-'));
  good = new Uint8Array(readFileSync(await fixtureIndexPath()));
  flipped = good.slice();
  flipped[Math.floor(good.length / 2)] ^= 0x40;
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A whole second, so a time set back is exactly the time it had (utimes takes no nanoseconds). */
const WHEN = 1_800_000_000;

/** Writes `bytes` at `name` in the test folder, modified at WHEN. */
function file(name: string, bytes: Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  utimesSync(path, WHEN, WHEN);
  return path;
}

/** Rewrites `path` in place with `bytes`, its modification time set back to WHEN (what only a checksum can catch). */
function rewriteKeepingTime(path: string, bytes: Uint8Array): void {
  writeFileSync(path, bytes);
  utimesSync(path, WHEN, WHEN);
}

describe('verified once for the workers', () => {
  test('a good file verifies, and a worker opens it', () => {
    const path = file('good.idx', good);
    const verified = verifyForWorkers(path);
    expect(verified).not.toBeNull();
    expect(openVerifiedIndex(path, verified).current.lookup('8.8.8.8')).not.toBeNull();
  });

  test('a corrupt file does not verify, and the worker refuses it with the checksum message', () => {
    const path = file('corrupt.idx', flipped);
    expect(verifyForWorkers(path)).toBeNull();
    expect(() => openVerifiedIndex(path, null)).toThrow(IndexFileError);
    expect(() => openVerifiedIndex(path, null)).toThrow(/checksum mismatch/);
  });

  test('a missing file is not verified', () => {
    expect(verifyForWorkers(join(dir, 'absent.idx'))).toBeNull();
  });

  test('the identical file is not hashed again by the worker', () => {
    // Proof that the worker skips the hash: the same inode, size and time but a flipped byte still opens.
    const path = file('same.idx', good);
    const verified = verifyForWorkers(path);
    rewriteKeepingTime(path, flipped);
    expect(() => openVerifiedIndex(path, verified)).not.toThrow();
  });

  test('a file renamed over the verified one is verified by the worker', () => {
    const path = file('renamed.idx', good);
    const verified = verifyForWorkers(path);
    // Same size and time, another inode.
    renameSync(file('next.idx', flipped), path);
    expect(() => openVerifiedIndex(path, verified)).toThrow(/checksum mismatch/);
  });

  test('a file rewritten in place since (a new modification time) is verified by the worker', () => {
    const path = file('rewritten.idx', good);
    const verified = verifyForWorkers(path);
    writeFileSync(path, flipped);
    utimesSync(path, WHEN + 5, WHEN + 5);
    expect(() => openVerifiedIndex(path, verified)).toThrow(/checksum mismatch/);
  });

  test('the identity of another path is not taken for this one', () => {
    const a = file('a.idx', good);
    const b = file('b.idx', flipped);
    expect(() => openVerifiedIndex(b, verifyForWorkers(a))).toThrow(/checksum mismatch/);
  });
});
