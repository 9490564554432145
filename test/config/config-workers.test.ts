/**
 * The worker count `bun run start` may start threads for before it reads its
 * configuration (src/config-workers.ts): the pool's size only where the
 * configuration will serve that index from that pool, else none.
 */
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { earlyWorkerCount } from '../../src/config-workers.ts';
import { loadConfig } from '../../src/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-early-count-'));
const index = join(dir, 'present.idx');
writeFileSync(index, 'not read, only found');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('a pool serving an index already present: its size, as loadConfig reads it', () => {
  const env = { IPINTEL_INDEX: index, IPINTEL_WORKERS: '3' };
  expect(earlyWorkerCount(env)).toBe(3);
  expect(earlyWorkerCount(env)).toBe(loadConfig(env).workers);
  expect(earlyWorkerCount({ IPINTEL_INDEX: ` ${index} `, IPINTEL_ROLE: 'Server' })).toBe(availableParallelism() > 1 ? loadConfig({ IPINTEL_INDEX: index }).workers : 0);
});

test('none where the host would not serve that index from a pool at once', () => {
  expect(earlyWorkerCount({ IPINTEL_INDEX: index, IPINTEL_WORKERS: '1' })).toBe(0);
  expect(earlyWorkerCount({ IPINTEL_INDEX: index, IPINTEL_WORKERS: '2', IPINTEL_ROLE: 'publisher' })).toBe(0);
  expect(earlyWorkerCount({ IPINTEL_INDEX: index, IPINTEL_WORKERS: '2', IPINTEL_DB: ':memory:' })).toBe(0);
  expect(earlyWorkerCount({ IPINTEL_INDEX: index, IPINTEL_WORKERS: '2', IPINTEL_INDEX_URL: 'https://example.test/index' })).toBe(0);
  // The first start builds the index first (minutes, in a child): threads would only wait, holding memory.
  expect(earlyWorkerCount({ IPINTEL_INDEX: join(dir, 'absent.idx'), IPINTEL_WORKERS: '2' })).toBe(0);
  // A malformed count starts nothing; loadConfig refuses it with its message.
  expect(earlyWorkerCount({ IPINTEL_INDEX: index, IPINTEL_WORKERS: 'two' })).toBe(0);
  expect(() => loadConfig({ IPINTEL_WORKERS: 'two' })).toThrow(/IPINTEL_WORKERS must be a whole number/);
});
