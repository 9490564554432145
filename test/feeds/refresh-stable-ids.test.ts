/** The feed refresher's builds follow the index it serves: the second round's build keeps the first one's ids. */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCatalog } from '../../src/feeds/catalog.ts';
import { runRefreshRound, type RefreshEvent, type RefreshRequest } from '../../src/feeds/refresh-round.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { startPublisher, writeTestCatalog, type Publisher } from './publisher.ts';

const TOR = 'tor/torbulkexitlist';
const dir = mkdtempSync(join(tmpdir(), 'ipintel-refresh-stable-'));
let publisher: Publisher;
beforeAll(() => {
  publisher = startPublisher(join(dir, 'publisher'), [TOR]);
});
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('the second round builds with the served index as the previous one: ids kept, answers as before plus the new exit', async () => {
  const d = join(dir, 'rounds');
  mkdirSync(d, { recursive: true });
  writeTestCatalog(join(d, 'catalog.json'), [TOR], publisher.url);
  const indexPath = join(d, 'ipintel.idx');
  const req: RefreshRequest = {
    indexPath,
    statePath: `${indexPath}.feeds-state.json`,
    feedsDir: join(d, 'feeds'),
    catalog: loadCatalog(join(d, 'catalog.json')),
    refreshMs: 3_600_000,
    manifest: null,
    withDefaults: false,
    mirror: null,
    limits: { timeoutMs: 5_000, maxBytes: 64 * 1048576, connectTimeoutMs: 1_000 },
    retryBaseMs: 60_000,
    clockOffsetMs: 0,
  };
  const events: RefreshEvent[] = [];
  await runRefreshRound(req, (e) => events.push(e));
  const first = IndexReader.open(indexPath);
  expect(first.meta.deadIds).toBeUndefined();
  const firstBuiltAt = first.meta.builtAt;
  const exits = readFileSync(join(publisher.root, TOR), 'utf8').trim().split('\n');
  const idsBefore = exits.slice(0, 50).map((ip) => first.recordIdOf(ip));

  // An hour and more later the publisher lists one more exit.
  appendFileSync(join(publisher.root, TOR), '45.1.2.3\n');
  await Bun.sleep(10);
  await runRefreshRound({ ...req, clockOffsetMs: 2 * 3_600_000 }, (e) => events.push(e));
  expect(events.filter((e) => e.kind === 'built').map((e) => (e as Extract<RefreshEvent, { kind: 'built' }>).ok)).toEqual([true, true]);
  const second = IndexReader.open(indexPath);
  expect(second.meta.deadIds?.previousBuiltAt).toBe(firstBuiltAt);
  expect(exits.slice(0, 50).map((ip) => second.recordIdOf(ip))).toEqual(idsBefore);
  expect(second.lookup('45.1.2.3')!.record.flags).toBe(first.lookup(exits[0])!.record.flags);
}, 60_000);
