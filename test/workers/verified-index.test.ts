/**
 * The index verified once per host (src/host/workers/verified-index.ts): a worker
 * skips hashing only the very file the primary verified; a file replaced or
 * rewritten since, or one the primary refused, it verifies itself. A file a
 * worker mapped before the verdict is kept only when it is the file verified.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IndexFileError } from '../../src/index/map-index-file.ts';
import { mapEarlyIndex, openVerifiedIndex, settleEarlyIndex, verifyForWorkers } from '../../src/host/workers/verified-index.ts';
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

describe("mapped early, before the primary's verdict", () => {
  test('the file is parsed, not hashed: a corrupt section maps', () => {
    const early = mapEarlyIndex(file('early-corrupt.idx', flipped));
    expect(early).not.toBeNull();
    expect(mapEarlyIndex(join(dir, 'early-absent.idx'))).toBeNull();
  });

  test('the very file the primary verified is kept as mapped', () => {
    const path = file('early-same.idx', good);
    const early = mapEarlyIndex(path)!;
    const reader = early.holder.current;
    expect(settleEarlyIndex(early, verifyForWorkers(path), 3)).toBe(false);
    expect(early.holder.current).toBe(reader);
    expect(early.holder.current.lookup('8.8.8.8')).not.toBeNull();
  });

  test('a file the primary refused is refused by the worker, not served as mapped', () => {
    const path = file('early-refused.idx', flipped);
    const early = mapEarlyIndex(path)!;
    expect(() => settleEarlyIndex(early, verifyForWorkers(path), 1)).toThrow(/checksum mismatch/);
  });

  test('a file renamed over the mapped one before the check: the worker serves the file verified, not the one it mapped', () => {
    const path = file('early-swapped.idx', flipped);
    const early = mapEarlyIndex(path)!;
    const mapped = early.holder.current;
    // Same size and time, another inode: the file the primary checks is not the one the worker mapped.
    renameSync(file('early-next.idx', good), path);
    const verified = verifyForWorkers(path);
    expect(verified).not.toBeNull();
    expect(settleEarlyIndex(early, verified, 4)).toBe(true);
    expect(early.holder.current).not.toBe(mapped);
    expect(early.holder.generation).toBe(4);
    const middle = Math.floor(good.length / 2);
    expect(early.holder.current.file.data[middle]).toBe(good[middle]!);
  });

  test('a file swapped after the check for a corrupt one: the worker hashes what it re-opens and refuses it', () => {
    const path = file('early-late.idx', good);
    const verified = verifyForWorkers(path);
    renameSync(file('early-late-next.idx', flipped), path);
    const early = mapEarlyIndex(path)!;
    expect(() => settleEarlyIndex(early, verified, 1)).toThrow(/checksum mismatch/);
  });
});
