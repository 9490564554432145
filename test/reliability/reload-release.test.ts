/**
 * A replaced index is released soon after a reload. Found by the soak's
 * RSS sampling: Bun has no munmap, a replaced file's mapping goes only when
 * the garbage collector finalizes its reader, and a quiet server may not
 * collect for a long time — every replaced index stayed resident (up to 4
 * at once with a 94 MiB file, +282 MiB RSS) and its unlinked file kept its
 * disk blocks.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordSwap } from '../../src/feeds/swap-summary.ts';
import { IndexHolder } from '../../src/index/holder.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { buildSoakIndexes, swapIndexFile } from '../../tools/soak/indexes.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-release-'));
let files: { a: string; b: string };
beforeAll(async () => {
  files = await buildSoakIndexes(dir, FIXTURE_FEEDS_DIR);
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Distinct files (inodes) this process has mapped whose path contains `name`, deleted ones included. */
function mappedFiles(name: string): number {
  const inodes = new Set<string>();
  for (const line of readFileSync('/proc/self/maps', 'utf8').split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols.length >= 6 && cols.slice(5).join(' ').includes(name)) inodes.add(cols[4]);
  }
  return inodes.size;
}

/** Opens `path`, reads from it, and drops it. */
function openAndDrop(path: string): void {
  expect(IndexReader.open(path).lookup('8.8.8.8')).toBeDefined();
}

test(
  'an index opened and dropped is unmapped at the next full collection (decoding its META keeps no view of the mapping)',
  async () => {
    const first = join(dir, 'dropped-first.idx');
    const last = join(dir, 'dropped-last.idx');
    swapIndexFile(files.a, first);
    swapIndexFile(files.b, last);
    openAndDrop(first);
    openAndDrop(last);
    expect(mappedFiles('dropped-')).toBe(2);
    await Bun.sleep(10);
    Bun.gc(true);
    // The last one opened too: nothing (msgpackr's view of the last buffer it decoded) holds on to it.
    expect(mappedFiles('dropped-')).toBe(0);
  },
  30_000,
);

test(
  "a swap's summary lets go of both files it compared: soon after it, only the live index is mapped",
  async () => {
    const live = join(dir, 'summary-live.idx');
    swapIndexFile(files.a, live);
    const holder = IndexHolder.open(live);
    const logged: string[] = [];
    // As the refresher does: the file being replaced kept open before the new one is renamed over it.
    const fd = openSync(live, 'r');
    swapIndexFile(files.b, live);
    holder.reload();
    const summary = await recordSwap(`/dev/fd/${fd}`, live, { indexPath: live, log: (l) => logged.push(l), now: Date.now });
    closeSync(fd);
    expect(summary).not.toBeNull();
    expect(logged[0]).toStartWith('feeds: swap changed');
    // Quiet: nothing allocates; the comparison's mappings went with its thread, the holder's old one with the holder's release.
    await Bun.sleep(4_000);
    expect(mappedFiles('summary-live.idx')).toBe(1);
    expect(holder.current.lookup('8.8.8.8')).toBeDefined();
  },
  30_000,
);

test(
  'after five swaps and a quiet while, only the live index is mapped',
  async () => {
    const live = join(dir, 'release-live.idx');
    swapIndexFile(files.a, live);
    const holder = IndexHolder.open(live);
    for (let i = 0; i < 5; i++) {
      swapIndexFile(i % 2 ? files.a : files.b, live);
      holder.reload();
      expect(holder.current.lookup('8.8.8.8')).toBeDefined();
    }
    expect(mappedFiles('release-live.idx')).toBeGreaterThan(1); // the old ones are still there right after
    // Quiet: nothing allocates, so only the holder's own release can free the old mappings.
    await Bun.sleep(4_000);
    expect(mappedFiles('release-live.idx')).toBe(1);
    expect(holder.current.meta.builtAt).toBe(new Date(Date.parse('2026-11-02T00:00:00Z')).toISOString());
  },
  30_000,
);

test(
  'answers served from a replaced index do not keep it mapped (the lookup route memo lets go at the next request)',
  async () => {
    const { startTestServer } = await import('../helpers/test-server.ts');
    const live = join(dir, 'route-live.idx');
    swapIndexFile(files.a, live);
    const token = 'a'.repeat(40);
    const server = await startTestServer({ IPINTEL_INDEX: live, IPINTEL_ADMIN_TOKEN: token, IPINTEL_RATE_LIMITS: 'off' });
    try {
      const ips = ['8.8.8.8', '1.1.1.1', '9.9.9.9', '185.220.101.1', '66.249.66.1', '2001:4860:4860::8888', '10.0.0.1', '203.0.113.5'];
      for (let i = 0; i < 5; i++) {
        // Answers from the live index fill the memo; then the file is replaced and reloaded.
        for (const ip of ips) expect((await fetch(`${server.url}/v1/ip/${ip}`)).status).toBe(200);
        swapIndexFile(i % 2 ? files.a : files.b, live);
        expect((await fetch(`${server.url}/reload`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      }
      // One answer from the new index: whatever referenced the old ones must let go now.
      expect((await fetch(`${server.url}/v1/ip/8.8.8.8`)).status).toBe(200);
      await Bun.sleep(4_000);
      expect(mappedFiles('route-live.idx')).toBe(1);
    } finally {
      await server.stop();
    }
  },
  60_000,
);
