/**
 * The feed refresher against a real publisher on 127.0.0.1 serving copies
 * of the fixture feeds: a server on a small index swaps to the refreshed
 * one (a Tor exit becomes is_tor), conditional requests download nothing
 * when nothing changed, a changed feed rebuilds once, and failures keep the
 * previous data serving with their state reported.
 */
import { openApiDocumentText } from '../../src/http/routes/table.ts';
import { OpenApiResponses } from '../helpers/openapi-responses.ts';
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import type { RefreshRequest } from '../../src/feeds/refresh-round.ts';
import { startFeedRefresher } from '../../src/feeds/start.ts';
import type { FeedRefresher } from '../../src/feeds/refresher.ts';
import type { RunningServer } from '../../src/host/start-server.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { startPublisher, TEST_REFRESH, writeTestCatalog, type Publisher } from './publisher.ts';
import { countingBuilds, smallServerIndex } from './refresh-kit.ts';

const TOR = 'tor/torbulkexitlist';
const CLOUDFLARE = 'cloud/cloudflare-ips-v4.txt';
const DROP = 'threat/spamhaus-drop_v4.json';
const GOOGLEBOT = 'crawlers/googlebot.json';
const VPN = 'vpn/x4bnet-vpn-ipv4.txt';
const TOR_EXIT = '185.241.208.232';
const HOUR = 3_600_000;

let tmp: string;
let publisher: Publisher;

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'ipintel-refresher-'));
  publisher = startPublisher(join(tmp, 'publisher'), [TOR, CLOUDFLARE, DROP, GOOGLEBOT, VPN]);
});

afterAll(() => {
  publisher.stop();
  rmSync(tmp, { recursive: true, force: true });
});

interface Setup {
  server: RunningServer;
  refresher: FeedRefresher;
  dir: string;
  logs: string[];
  builds: RefreshRequest[];
  clock: { now: number };
}

/** A server over a fresh small index with a refresher over `paths`; the clock is the test's. */
async function setup(name: string, paths: string[]): Promise<Setup> {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  const index = join(dir, 'ipintel.idx');
  await smallServerIndex(index);
  writeTestCatalog(join(dir, 'catalog.json'), paths, publisher.url);
  const server = await startTestServer({ IPINTEL_INDEX: index, IPINTEL_FEEDS_DIR: join(dir, 'feeds'), IPINTEL_FEEDS_CATALOG: join(dir, 'catalog.json'), IPINTEL_ADMIN_TOKEN: 'admin-token' });
  const logs: string[] = [];
  const builds: RefreshRequest[] = [];
  const clock = { now: Date.now() };
  const status = startFeedRefresher(server.services.config, server.services.index, {
    ...TEST_REFRESH,
    log: (line) => logs.push(line),
    now: () => clock.now,
    runChild: countingBuilds(builds),
  });
  server.services.feeds = status;
  return { server, refresher: status.refresher!, dir, logs, builds, clock };
}

/** The declared answer shapes: every data-status answer here (feeds block, admin sources) must conform. */
const contract = new OpenApiResponses(JSON.parse(openApiDocumentText(false)));

async function getJson(s: RunningServer, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.url}${path}`, { headers });
  expect(res.status).toBe(200);
  const text = await res.text();
  if (path === '/v1/data/status') expect(contract.problems({ method: 'GET', path, status: res.status, headers: res.headers, text })).toEqual([]);
  return JSON.parse(text) as any;
}

/** Files a refresh must never leave behind: download temps and index temps. */
function leftovers(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => /\.download-|\.tmp/.test(f));
}

describe('first start: serve the small index at once, then swap to the refreshed one', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup('first-start', [TOR, CLOUDFLARE]);
  });
  afterAll(async () => {
    await s.refresher.stop();
    await s.server.stop();
  });

  test('the refresh fetches, builds once in a child and swaps; answers and status change', async () => {
    // The server answers before any feed arrived.
    const before = await getJson(s.server, `/v1/ip/${TOR_EXIT}`);
    expect(before.classification.is_tor).toBe(false);
    const generation = s.server.services.index.generation;

    await s.refresher.refresh();

    expect(s.builds).toHaveLength(1);
    expect(s.server.services.index.generation).toBe(generation + 1);
    expect(s.server.services.index.current.meta.managedBy).toBe('server');
    const after = await getJson(s.server, `/v1/ip/${TOR_EXIT}`);
    expect(after.classification.is_tor).toBe(true);
    expect(s.logs.some((l) => /swapped in .* coverage: .*tor=ready/.test(l))).toBe(true);
    expect(s.logs.filter((l) => l.startsWith(`feeds: ${TOR} updated`))).toHaveLength(1);

    const status = await getJson(s.server, '/v1/data/status');
    expect(status.coverage.tor.state).toBe('ready');
    expect(status.feeds.managed_by).toBe('server');
    expect(status.feeds.kinds.tor.state).toBe('fresh');
    // On the test's clock (the child runs it forward from the parent's reading).
    const fetchedAt = Date.parse(status.feeds.kinds.tor.last_fetch_at);
    expect(fetchedAt).toBeGreaterThanOrEqual(s.clock.now);
    expect(fetchedAt).toBeLessThan(s.clock.now + 60_000);
    // Public: kinds only, no paths or publishers.
    expect(status.feeds.sources).toBeUndefined();
    expect(JSON.stringify(status.feeds)).not.toContain('torbulkexitlist');
    const admin = await getJson(s.server, '/v1/data/status', { authorization: 'Bearer admin-token' });
    expect(admin.feeds.sources.map((x: { path: string; state: string }) => `${x.path}:${x.state}`).sort()).toEqual([`${CLOUDFLARE}:fresh`, `${TOR}:fresh`]);
    expect(leftovers(s.dir)).toEqual([]);
  }, 60_000);

  test('a second refresh downloads nothing when the publisher answers 304, and builds nothing', async () => {
    const sentBefore = new Map(publisher.sent);
    s.clock.now += 25 * HOUR; // every feed due again
    await s.refresher.refresh();
    expect(publisher.sent.get(TOR)).toBe(sentBefore.get(TOR));
    expect(publisher.sent.get(CLOUDFLARE)).toBe(sentBefore.get(CLOUDFLARE));
    expect(publisher.notModified.get(TOR)).toBeGreaterThanOrEqual(1);
    expect(publisher.notModified.get(CLOUDFLARE)).toBeGreaterThanOrEqual(1);
    expect(s.builds).toHaveLength(1);
  }, 60_000);

  test('/metrics counts the fetches and builds, and reports the last build and the feeds by state', async () => {
    const res = await fetch(`${s.server.url}/metrics`, { headers: { authorization: 'Bearer admin-token' } });
    expect(res.status).toBe(200);
    const text = await res.text();
    const value = (series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    // Two feeds fetched anew on the first refresh, both answered 304 on the second; one build, which worked.
    expect(value('ipintel_feed_fetches_total{result="updated"}')).toBe(2);
    expect(value('ipintel_feed_fetches_total{result="not_modified"}')).toBe(2);
    expect(value('ipintel_feed_fetches_total{result="failed"}')).toBe(0);
    expect(value('ipintel_feed_builds_total{result="ok"}')).toBe(1);
    expect(value('ipintel_feed_builds_total{result="failed"}')).toBe(0);
    expect(value('ipintel_feed_sources{state="fresh"}')).toBe(2);
    expect(value('ipintel_feed_sources{state="missing"}')).toBe(0);
    expect(value('ipintel_feed_last_build_success')).toBe(1);
    expect(value('ipintel_feed_last_build_duration_seconds')).toBeGreaterThan(0);
    // The child's own peak (a bun process holds tens of MiB at least), not this process's.
    expect(value('ipintel_feed_last_build_peak_rss_bytes')).toBeGreaterThan(16 * 1048576);
    expect(value('ipintel_feed_next_attempt_timestamp_seconds')).toBeGreaterThan(s.clock.now / 1000);
    expect(s.logs.some((l) => /swapped in .*built in [\d.]+ s, peak memory \d+ MiB/.test(l))).toBe(true);
  });

  test('a changed feed is fetched at its own cadence and triggers exactly one rebuild', async () => {
    const sentCloud = publisher.sent.get(CLOUDFLARE);
    appendFileSync(join(publisher.root, TOR), '203.0.113.77\n');
    s.clock.now += 2 * HOUR; // Tor's hourly cadence passed, the cloud list's daily one did not
    await s.refresher.refresh();
    expect(publisher.sent.get(CLOUDFLARE)).toBe(sentCloud);
    expect(s.builds).toHaveLength(2);
    expect((await getJson(s.server, '/v1/ip/203.0.113.77')).classification.is_tor).toBe(true);
    // Nothing changed since: no third build.
    s.clock.now += 2 * HOUR;
    await s.refresher.refresh();
    expect(s.builds).toHaveLength(2);
  }, 60_000);
});

describe('failure paths keep the previous data serving', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup('failures', [TOR, CLOUDFLARE, DROP, GOOGLEBOT]);
    await s.refresher.refresh();
  }, 60_000);
  afterAll(async () => {
    for (const p of [TOR, CLOUDFLARE, DROP, GOOGLEBOT]) publisher.modes.delete(p);
    await s.refresher.stop();
    await s.server.stop();
  });

  test('a 404, a truncated file, an error page and a hung server: previous copies serve, states say why, no temp files', async () => {
    expect(s.builds).toHaveLength(1);
    const generation = s.server.services.index.generation;
    publisher.modes.set(TOR, '404');
    publisher.modes.set(DROP, 'truncated');
    publisher.modes.set(GOOGLEBOT, 'html');
    publisher.modes.set(CLOUDFLARE, 'hang');
    s.clock.now += 25 * HOUR;
    await s.refresher.refresh();

    expect(s.builds).toHaveLength(1);
    expect(s.server.services.index.generation).toBe(generation);
    expect((await getJson(s.server, `/v1/ip/${TOR_EXIT}`)).classification.is_tor).toBe(true);
    const admin = await getJson(s.server, '/v1/data/status', { authorization: 'Bearer admin-token' });
    const byPath = Object.fromEntries(admin.feeds.sources.map((x: { path: string }) => [x.path, x]));
    expect(byPath[TOR].state).toBe('failed');
    // The status number only: a status text is the publisher's bytes.
    expect(byPath[TOR].reason).toBe('HTTP 404');
    expect(byPath[DROP].reason).toMatch(/^refused: /);
    expect(byPath[GOOGLEBOT].reason).toMatch(/^refused: /);
    expect(byPath[CLOUDFLARE].reason).toMatch(/timed out/);
    // Retries back off: the next attempt is later than now, not the next second.
    for (const p of [TOR, DROP, GOOGLEBOT, CLOUDFLARE]) expect(Date.parse(byPath[p].next_attempt_at)).toBeGreaterThanOrEqual(s.clock.now + 60_000);
    expect(admin.feeds.kinds.tor.state).toBe('failed');
    // The public view names the kind's state, not the reason.
    const pub = await getJson(s.server, '/v1/data/status');
    expect(pub.feeds.kinds.tor.state).toBe('failed');
    expect(JSON.stringify(pub.feeds)).not.toContain('404');
    expect(leftovers(s.dir)).toEqual([]);
  }, 60_000);

  test('a feed that never had a good copy is missing', async () => {
    const s2 = await setup('missing', [TOR]);
    try {
      publisher.modes.set(TOR, '404');
      await s2.refresher.refresh();
      const pub = await getJson(s2.server, '/v1/data/status');
      expect(pub.feeds.kinds.tor.state).toBe('missing');
      expect(pub.feeds.kinds.tor.missing).toBe(1);
      expect(s2.builds).toHaveLength(0);
      expect(existsSync(join(s2.dir, 'feeds', 'feeds.json'))).toBe(false);
    } finally {
      publisher.modes.delete(TOR);
      await s2.refresher.stop();
      await s2.server.stop();
    }
  }, 60_000);
});

describe("an operator's own index", () => {
  test('is left untouched: no fetch, no build, status says operator-managed', async () => {
    const dir = join(tmp, 'operator');
    mkdirSync(dir, { recursive: true });
    const index = join(dir, 'operator.idx');
    const src = join(FIXTURE_FEEDS_DIR, CLOUDFLARE);
    // Built as `build-index --manifest` builds: no server mark.
    await buildIndex({ sources: [{ options: { type: 'cidr-list', category: 'content', path: src }, absPath: src, displayPath: CLOUDFLARE }], out: index, quiet: true });
    const before = readFileSync(index);
    writeTestCatalog(join(dir, 'catalog.json'), [TOR], publisher.url);
    const server = await startTestServer({ IPINTEL_INDEX: index, IPINTEL_FEEDS_DIR: join(dir, 'feeds'), IPINTEL_FEEDS_CATALOG: join(dir, 'catalog.json') });
    const logs: string[] = [];
    const sentTor = publisher.sent.get(TOR) ?? 0;
    try {
      const status = startFeedRefresher(server.services.config, server.services.index, { log: (l) => logs.push(l) });
      server.services.feeds = status;
      expect(status.mode).toBe('operator');
      expect(status.refresher).toBeNull();
      const pub = await getJson(server, '/v1/data/status');
      expect(pub.feeds).toEqual({ managed_by: 'operator', refresh: 'operator-managed', kinds: {} });
      expect(logs.some((l) => l.includes('built by an operator'))).toBe(true);
      await Bun.sleep(200);
      expect(publisher.sent.get(TOR) ?? 0).toBe(sentTor);
      expect(readFileSync(index).equals(before)).toBe(true);
      expect(existsSync(join(dir, 'feeds'))).toBe(false);
    } finally {
      await server.stop();
    }
  });

  test('with IPINTEL_FEEDS_MANIFEST: its catalog feeds are refreshed in place, its local files kept, the index stays the operator\'s', async () => {
    const dir = join(tmp, 'operator-manifest');
    mkdirSync(join(dir, 'tor'), { recursive: true });
    // The operator's manifest: an old Tor list (a catalog path) and a local list of their own.
    writeFileSync(join(dir, TOR), readFileSync(join(FIXTURE_FEEDS_DIR, TOR), 'utf8').split('\n').slice(0, 400).join('\n') + '\n');
    writeFileSync(join(dir, 'own.txt'), '192.0.2.0/24\n');
    writeFileSync(join(dir, 'feeds.json'), JSON.stringify({ sources: [{ type: 'tor-exits', path: TOR }, { type: 'cidr-list', category: 'vpn', path: 'own.txt' }] }));
    const ownBefore = readFileSync(join(dir, 'own.txt'), 'utf8');
    const index = join(dir, 'operator.idx');
    await buildIndex({ sources: [{ options: { type: 'cidr-list', category: 'vpn', path: 'own.txt' }, absPath: join(dir, 'own.txt'), displayPath: 'own.txt' }], out: index, quiet: true });
    writeTestCatalog(join(dir, 'catalog.json'), [TOR, CLOUDFLARE], publisher.url);
    const server = await startTestServer({ IPINTEL_INDEX: index, IPINTEL_FEEDS_CATALOG: join(dir, 'catalog.json'), IPINTEL_FEEDS_MANIFEST: join(dir, 'feeds.json') });
    const builds: RefreshRequest[] = [];
    try {
      const status = startFeedRefresher(server.services.config, server.services.index, {
        withDefaults: false,
        log: () => {},
        runChild: countingBuilds(builds),
      });
      server.services.feeds = status;
      expect(status.mode).toBe('manifest');
      // Only the catalog feeds the manifest names.
      expect(status.refresher!.feeds().map((f) => f.feed.path)).toEqual([TOR]);
      await status.refresher!.refresh();
      expect(builds).toHaveLength(1);
      expect(readFileSync(join(dir, TOR))).toEqual(readFileSync(join(publisher.root, TOR)));
      expect(readFileSync(join(dir, 'own.txt'), 'utf8')).toBe(ownBefore);
      const meta = server.services.index.current.meta;
      expect(meta.managedBy).toBeUndefined();
      expect(meta.sources.map((x) => x.path).sort()).toEqual(['own.txt', TOR].sort());
      expect((await getJson(server, `/v1/ip/${TOR_EXIT}`)).classification.is_tor).toBe(true);
      expect((await getJson(server, '/v1/data/status')).feeds.managed_by).toBe('operator-manifest');
      await status.refresher!.stop();
    } finally {
      await server.stop();
    }
  }, 60_000);
});

describe('picking up a file another refresher built', () => {
  test('reloads a replaced file once, and not at all when this thread already serves it (a swap that reached every worker)', async () => {
    const s = await setup('pickup', [CLOUDFLARE]);
    try {
      const index = join(s.dir, 'ipintel.idx');
      const holder = s.server.services.index;
      await s.refresher.refresh(); // the first round (fetch, build, swap) is over
      // Another process replaces the file: picked up, one reload.
      await smallServerIndex(index);
      const g0 = holder.generation;
      await s.refresher.pickUp();
      expect(holder.generation).toBe(g0 + 1);
      expect(s.logs.filter((l) => l.includes('feeds: picked up'))).toHaveLength(1);
      // The file is replaced again and this thread is reloaded with it (as the primary does for every worker): nothing to pick up.
      await Bun.sleep(20); // the ctime of the new file, then this load, on the millisecond clock
      await smallServerIndex(index);
      await Bun.sleep(20);
      holder.reload(index);
      const g1 = holder.generation;
      await s.refresher.pickUp();
      expect(holder.generation).toBe(g1);
      expect(s.logs.filter((l) => l.includes('feeds: picked up'))).toHaveLength(1);
    } finally {
      await s.refresher.stop();
      await s.server.stop();
    }
  }, 60_000);
});

describe('a poisoned third-party list', () => {
  test('0.0.0.0/0 in a VPN list: refused with its reason in one log line, status and metrics; the previous copy builds and answers stay', async () => {
    const s = await setup('poisoned', [TOR, VPN]);
    const original = readFileSync(join(publisher.root, VPN), 'utf8');
    try {
      await s.refresher.refresh();
      expect(s.builds).toHaveLength(1);
      const answers = async () => Promise.all(['8.8.8.8', '1.1.1.1', '52.95.110.1'].map(async (ip) => (await getJson(s.server, `/v1/ip/${ip}`)).classification));
      const before = await answers();
      for (const c of before) expect(c.is_vpn).toBe(false);

      // The poison, and a real change elsewhere so that a build runs.
      appendFileSync(join(publisher.root, VPN), '0.0.0.0/0\n');
      appendFileSync(join(publisher.root, TOR), '203.0.113.78\n');
      s.clock.now += 25 * HOUR;
      await s.refresher.refresh();
      expect(s.builds).toHaveLength(2);
      expect((await getJson(s.server, '/v1/ip/203.0.113.78')).classification.is_tor).toBe(true);
      expect(await answers()).toEqual(before);
      expect(readFileSync(join(s.dir, 'feeds', VPN), 'utf8')).toBe(original);

      const lines = s.logs.filter((l) => l.includes(VPN));
      expect(lines.filter((l) => l.includes('refused'))).toEqual([`feeds: ${VPN} kept-previous 10862 rows: refused: lists the whole IPv4 space (/0)`]);
      const admin = await getJson(s.server, '/v1/data/status', { authorization: 'Bearer admin-token' });
      const vpn = admin.feeds.sources.find((x: { path: string }) => x.path === VPN);
      expect(vpn.state).toBe('refused');
      expect(vpn.reason).toBe('refused: lists the whole IPv4 space (/0)');
      expect(admin.feeds.kinds.vpn.state).toBe('refused');
      expect(admin.feeds.kinds.vpn.refused).toBe(1);
      const pub = await getJson(s.server, '/v1/data/status');
      expect(pub.feeds.kinds.vpn.state).toBe('refused');
      expect(JSON.stringify(pub.feeds)).not.toContain('0.0.0.0');
      const metrics = await (await fetch(`${s.server.url}/metrics`, { headers: { authorization: 'Bearer admin-token' } })).text();
      expect(metrics).toContain('ipintel_feed_sources{state="refused"} 1');
      expect(metrics).toContain('ipintel_feed_fetches_total{result="refused"} 1');

      // The publisher goes back to the accepted bytes: a 304 (the accepted copy's validators were kept), so nothing to parse, fresh again.
      writeFileSync(join(publisher.root, VPN), original);
      const notModified = publisher.notModified.get(VPN) ?? 0;
      s.clock.now += 25 * HOUR;
      await s.refresher.refresh();
      expect(publisher.notModified.get(VPN)).toBe(notModified + 1);
      const again = await getJson(s.server, '/v1/data/status', { authorization: 'Bearer admin-token' });
      expect(again.feeds.sources.find((x: { path: string }) => x.path === VPN).state).toBe('fresh');
      expect(s.builds).toHaveLength(2);
    } finally {
      writeFileSync(join(publisher.root, VPN), original);
      await s.refresher.stop();
      await s.server.stop();
    }
  }, 90_000);
});
