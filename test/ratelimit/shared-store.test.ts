/** The shared bucket table (src/http/ratelimit/shared-store.ts): same decisions as the in-process store, bounded, exact across threads. */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { MemoryBuckets } from '../../src/http/ratelimit/memory-store.ts';
import { allocateSharedBuckets, SharedBuckets } from '../../src/http/ratelimit/shared-store.ts';
import { prng } from '../helpers/prng.ts';
import { bucketKeyText } from '../../src/http/ratelimit/bucket-key.ts';

describe('SharedBuckets', () => {
  test('decides a random sequence exactly as the in-process buckets do', () => {
    const shared = new SharedBuckets(allocateSharedBuckets(4096));
    const memory = new MemoryBuckets(4096);
    const rand = prng(20);
    let now = 1_700_000_000_000;
    for (let i = 0; i < 20_000; i++) {
      now += Math.floor(rand() * 40);
      const key = `ip:10.0.0.${Math.floor(rand() * 30)}`;
      const tier = rand() < 0.5 ? 'anonymous' : 'free';
      expect(shared.consume(key, tier, now)).toEqual(memory.consume(key, tier, now));
    }
  });

  test('two views of one buffer share the buckets', () => {
    const memory = allocateSharedBuckets(64);
    const a = new SharedBuckets(memory);
    const b = new SharedBuckets(memory);
    let admitted = 0;
    for (let i = 0; i < 100; i++) if ((i % 2 ? a : b).consume('ip:1.2.3.4', 'anonymous', 1_000).allowed) admitted++;
    expect(admitted).toBe(60);
  });

  test('numeric IPv4 keys decide as the in-process buckets do on their text, one bucket per address', () => {
    const shared = new SharedBuckets(allocateSharedBuckets(4096));
    const memory = new MemoryBuckets(4096);
    const rand = prng(21);
    let now = 1_700_000_000_000;
    for (let i = 0; i < 20_000; i++) {
      now += Math.floor(rand() * 40);
      // Thirty addresses on both sides of 2^31 (as int32: negative and positive).
      const key = ((0x7ffffff0 + Math.floor(rand() * 30)) | 0) as number;
      expect(shared.consume(key, 'anonymous', now)).toEqual(memory.consume(bucketKeyText(key), 'anonymous', now));
    }
    // A numeric key is not the bucket of any text key: a fresh address is admitted with a full bucket.
    const other = new SharedBuckets(allocateSharedBuckets(64));
    for (let i = 0; i < 60; i++) other.consume(0x0a000001, 'anonymous', 1_000);
    expect(other.consume(0x0a000001, 'anonymous', 1_000).allowed).toBe(false);
    expect(other.consume(0x0a000002, 'anonymous', 1_000).remaining).toBe(59);
    expect(other.consume('ip:10.0.0.1', 'anonymous', 1_000).remaining).toBe(59);
  });

  test('holds at most its slots however many callers come, and a flood cannot refuse anyone', () => {
    const memory = allocateSharedBuckets(64);
    const table = new SharedBuckets(memory);
    for (let i = 0; i < 10_000; i++) expect(table.consume(`ip:caller-${i}`, 'anonymous', 5_000).allowed).toBe(true);
    expect(table.size).toBe(64);
    expect(memory.buffer.byteLength).toBeLessThan(64 * 16 + 64);
  });

  test('exact across worker threads hammering one key', async () => {
    const memory = allocateSharedBuckets(1024);
    const source = `
      import { SharedBuckets } from ${JSON.stringify(new URL('../../src/http/ratelimit/shared-store.ts', import.meta.url).pathname)};
      self.onmessage = (e) => {
        const table = new SharedBuckets(e.data);
        let ok = 0;
        for (let i = 0; i < 5000; i++) if (table.consume('key:shared', 'pro', 42_000).allowed) ok++;
        postMessage(ok);
      };`;
    const url = URL.createObjectURL(new Blob([source], { type: 'application/typescript' }));
    const workers = Array.from({ length: 4 }, () => new Worker(url));
    const counts = await Promise.all(
      workers.map(
        (w) =>
          new Promise<number>((resolve) => {
            w.onmessage = (e) => resolve(e.data as number);
            w.postMessage(memory);
          }),
      ),
    );
    for (const w of workers) w.terminate();
    expect(counts.reduce((a, b) => a + b, 0)).toBe(600);
  });
});
