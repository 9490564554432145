/**
 * A pool records what it serves into the history (src/host/workers/worker-main.ts):
 * one worker records the index, verified, once it listens.
 */
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(120_000); // recording packs the fixture index on the history thread; a loaded machine is slow
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { startWorkerPool } from '../../src/host/workers/pool.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-pool-history-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('a pool of two workers records the index it serves into the history, once', async () => {
  const index = join(dir, 'served.idx');
  copyFileSync(await fixtureIndexPath(), index);
  const history = join(dir, 'history');
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    IPINTEL_DNS_SERVERS: '127.0.0.1:9',
    IPINTEL_WORKERS: '2',
    IPINTEL_INDEX: index,
    IPINTEL_DB: join(dir, 'accounts.sqlite'),
    IPINTEL_HISTORY: '30d',
    IPINTEL_HISTORY_DIR: history,
  });
  const logs: string[] = [];
  const pool = await startWorkerPool(config, (line) => logs.push(line));
  try {
    expect((await fetch(`${pool.url}/health`)).status).toBe(200);
    const catalog = join(history, 'catalog.json');
    const end = Date.now() + 90_000;
    while (!existsSync(catalog) || (JSON.parse(readFileSync(catalog, 'utf8')) as { versions: unknown[] }).versions.length === 0) {
      if (Date.now() > end) throw new Error(`no version recorded in ${history}; pool log:\n${logs.join('\n')}`);
      await Bun.sleep(100);
    }
    expect((JSON.parse(readFileSync(catalog, 'utf8')) as { versions: unknown[] }).versions).toHaveLength(1);
  } finally {
    await pool.stop();
  }
});
