/** The refresh child: niced, fetches and builds outside the server, reports events, and is stopped at its memory cap, its time budget, or its parent's end. */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childCommand, runRefreshChild } from '../../src/feeds/refresh-child.ts';
import { runRefreshRound, type RefreshEvent, type RefreshRequest } from '../../src/feeds/refresh-round.ts';
import { loadRefreshState } from '../../src/feeds/feed-state.ts';
import { loadCatalog } from '../../src/feeds/catalog.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { removeChildLeftovers } from '../../src/feeds/leftovers.ts';
import { startPublisher, writeTestCatalog, type Publisher } from './publisher.ts';

const TOR = 'tor/torbulkexitlist';
const dir = mkdtempSync(join(tmpdir(), 'ipintel-refresh-child-'));
let publisher: Publisher;
beforeAll(() => {
  publisher = startPublisher(join(dir, 'publisher'), [TOR]);
});
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A request over a fresh folder for the Tor list on the test publisher. */
function request(name: string, extra: Partial<RefreshRequest> = {}): RefreshRequest {
  const d = join(dir, name);
  mkdirSync(d, { recursive: true });
  writeTestCatalog(join(d, 'catalog.json'), [TOR], publisher.url);
  const indexPath = join(d, 'ipintel.idx');
  return {
    indexPath,
    statePath: `${indexPath}.feeds-state.json`,
    feedsDir: join(d, 'feeds'),
    catalog: loadCatalog(join(d, 'catalog.json')),
    refreshMs: 86_400_000,
    manifest: null,
    withDefaults: false,
    mirror: null,
    limits: { timeoutMs: 5_000, maxBytes: 64 * 1048576, connectTimeoutMs: 1_000 },
    retryBaseMs: 60_000,
    clockOffsetMs: 0,
    ...extra,
  };
}

const GENEROUS = { compiled: false, memoryCapBytes: 2048 * 1048576, timeBudgetMs: 60_000 };

test('the child runs below the server: nice -n 10, then the refresh-run command (the request on stdin)', () => {
  const cmd = childCommand(false);
  expect(cmd[0]).toEndWith('nice');
  expect(cmd.slice(1, 3)).toEqual(['-n', '10']);
  expect(cmd.at(-1)).toBe('refresh-run');
});

test('one round: fetches, writes the state, builds, and reports each step and its own peak memory (not its parent\'s)', async () => {
  const req = request('round');
  const events: RefreshEvent[] = [];
  // This process holds far more than a round over one Tor list ever needs: the child's peak must not include it.
  const ballast = new Uint8Array(768 * 1048576).fill(1);
  const result = await runRefreshChild(req, { ...GENEROUS, onEvent: (e) => events.push(e) });
  expect(ballast[ballast.length - 1]).toBe(1);
  expect(result.outcome).toBe('ok');
  expect(events.map((e) => e.kind)).toEqual(['fetched', 'building', 'built', 'done']);
  const fetched = events[0] as Extract<RefreshEvent, { kind: 'fetched' }>;
  expect(fetched.outcomes).toEqual([expect.objectContaining({ path: TOR, status: 'updated' })]);
  const built = events[2] as Extract<RefreshEvent, { kind: 'built' }>;
  expect(built.ok).toBe(true);
  expect(built.coverage).toContain('tor=ready');
  expect(existsSync(req.indexPath)).toBe(true);
  const state = loadRefreshState(req.statePath);
  expect(state.feeds[TOR].hasCopy).toBe(true);
  expect(state.counters!.fetches.updated).toBe(1);
  expect(state.counters!.builds.ok).toBe(1);
  expect(result.peakRssBytes!).toBeGreaterThan(16 * 1048576);
  expect(result.peakRssBytes!).toBeLessThan(512 * 1048576);
}, 60_000);

test('a child over its memory cap is killed and says so; the index file is not touched', async () => {
  const req = request('cap');
  // Below what a bun process holds once it runs at all: the watchdog stops it at its first reading.
  const result = await runRefreshChild(req, { ...GENEROUS, memoryCapBytes: 24 * 1048576 });
  expect(result.outcome).toBe('memory_cap');
  expect(result.detail).toMatch(/^stopped at its memory cap: \d+ MiB resident, cap 24 MiB/);
  expect(existsSync(req.indexPath)).toBe(false);
}, 30_000);

test('a child past its time budget is killed (a publisher that never answers)', async () => {
  publisher.modes.set(TOR, 'hang');
  try {
    const req = request('budget', { limits: { timeoutMs: 60_000, maxBytes: 64 * 1048576, connectTimeoutMs: 60_000 } });
    const result = await runRefreshChild(req, { ...GENEROUS, timeBudgetMs: 1_500 });
    expect(result.outcome).toBe('time_budget');
    expect(result.detail).toBe('stopped at its time budget of 2 s');
    expect(result.seconds).toBeLessThan(10);
  } finally {
    publisher.modes.delete(TOR);
  }
}, 30_000);

test('a child whose parent goes away (its stdin closes) stops instead of refreshing for no one', async () => {
  publisher.modes.set(TOR, 'hang');
  try {
    const req = request('orphan', { limits: { timeoutMs: 60_000, maxBytes: 64 * 1048576, connectTimeoutMs: 60_000 } });
    const child = Bun.spawn(childCommand(false), { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' });
    child.stdin.write(`${JSON.stringify(req)}\n`);
    child.stdin.flush();
    await Bun.sleep(500); // it is now waiting on the publisher
    child.stdin.end();
    const t0 = performance.now();
    expect(await child.exited).toBe(70);
    expect(performance.now() - t0).toBeLessThan(5_000);
  } finally {
    publisher.modes.delete(TOR);
  }
}, 30_000);

test('stopping (the server closing) kills the child under way', async () => {
  publisher.modes.set(TOR, 'hang');
  try {
    const stopping = new AbortController();
    setTimeout(() => stopping.abort(), 300);
    const req = request('abort', { limits: { timeoutMs: 60_000, maxBytes: 64 * 1048576, connectTimeoutMs: 60_000 } });
    const result = await runRefreshChild(req, { ...GENEROUS, signal: stopping.signal });
    expect(result.outcome).toBe('failed');
    expect(result.detail).toContain('stopped');
    expect(existsSync(req.indexPath)).toBe(false);
  } finally {
    publisher.modes.delete(TOR);
  }
}, 30_000);

test("what a killed child left (its temp index, parked intervals, state temp and downloads) is removed; a live writer's temp stays", async () => {
  const d = join(dir, 'leftovers');
  mkdirSync(join(d, 'tor'), { recursive: true });
  const gone = Bun.spawn(['true']);
  await gone.exited;
  const index = join(d, 'ipintel.idx');
  const files = [`.ipintel.idx.tmp-${gone.pid}-1`, `.ipintel.idx.feeds-state.json.tmp-${gone.pid}-2`, `tor/.download-${gone.pid}-torbulkexitlist`, `.ipintel.idx.tmp-${gone.pid}-4.intervals`, `.ipintel.idx.tmp-${process.pid}-3`, 'tor/torbulkexitlist'];
  for (const f of files) writeFileSync(join(d, f), 'x');
  expect(removeChildLeftovers(gone.pid, [index, `${index}.feeds-state.json`], [join(d, 'tor')])).toBe(4);
  expect(files.filter((f) => existsSync(join(d, f)))).toEqual([`.ipintel.idx.tmp-${process.pid}-3`, 'tor/torbulkexitlist']);
});

/** The feed refresher's builds follow the index it serves: the second round's build keeps the first one's ids. */
test('the second round builds with the served index as the previous one: ids kept, answers as before plus the new exit', async () => {
  const req = request('rounds');
  const indexPath = req.indexPath;
  const events: RefreshEvent[] = [];
  await runRefreshRound(req, (e) => events.push(e));
  const first = IndexReader.open(indexPath);
  expect(first.meta.deadIds).toBeUndefined();
  const firstBuiltAt = first.meta.builtAt;
  const exits = readFileSync(join(publisher.root, TOR), 'utf8').trim().split('\n');
  const idsBefore = exits.slice(0, 50).map((ip) => first.recordIdOf(ip));

  // Past the feed's cadence the publisher lists one more exit (its list restored afterwards, for the other tests).
  appendFileSync(join(publisher.root, TOR), '45.1.2.3\n');
  await runRefreshRound({ ...req, clockOffsetMs: 2 * 86_400_000 }, (e) => events.push(e));
  writeFileSync(join(publisher.root, TOR), readFileSync(join(publisher.root, TOR), 'utf8').replace('45.1.2.3\n', ''));
  expect(events.filter((e) => e.kind === 'built').map((e) => (e as Extract<RefreshEvent, { kind: 'built' }>).ok)).toEqual([true, true]);
  const second = IndexReader.open(indexPath);
  expect(second.meta.deadIds?.previousBuiltAt).toBe(firstBuiltAt);
  expect(exits.slice(0, 50).map((ip) => second.recordIdOf(ip))).toEqual(idsBefore);
  expect(second.lookup('45.1.2.3')!.record.flags).toBe(first.lookup(exits[0])!.record.flags);
}, 60_000);
