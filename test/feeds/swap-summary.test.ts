/**
 * What each swap changed (issue 31): a refresher swap records its summary
 * (one log line, the state file), /v1/data/status shows the kept summaries
 * to the admin only, /metrics exports the last swap's headline counts; and
 * across swaps A -> B -> A the ranges that went back and forth are listed
 * as flapping. Real small builds; the refresher fetches from a publisher on
 * 127.0.0.1 serving the shared Tor snapshot.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import { countingBuilds } from './refresh-kit.ts';
import { startFeedRefresher } from '../../src/feeds/start.ts';
import type { FeedRefresher } from '../../src/feeds/refresher.ts';
import { flappingOf, loadSwapSummaries, recordSwap, swapSummariesPath, SWAPS_KEPT } from '../../src/feeds/swap-summary.ts';
import { openApiDocumentText } from '../../src/http/routes/table.ts';
import { parseIp } from '../../src/net/ip.ts';
import type { RunningServer } from '../../src/host/start-server.ts';
import { OpenApiResponses } from '../helpers/openapi-responses.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';
import { buildFromTexts, type TextSource } from '../helpers/small-build.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { startPublisher, TEST_REFRESH, writeTestCatalog, type Publisher } from './publisher.ts';

const TOR = 'tor/torbulkexitlist';
const CLOUDFLARE = 'cloud/cloudflare-ips-v4.txt';
const ADMIN = 'swap-admin';

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'ipintel-swaps-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('recordSwap over real small builds', () => {
  const GEO: TextSource = { type: 'geo-csv', name: 'geo.csv', text: '81.2.0.0,81.2.255.255,GB,England,,London,EC1A,51.5142,-0.0931,Europe/London\n' };
  const geofeed = (cc: string): TextSource => ({ type: 'geofeed', name: 'geofeed.csv', text: `81.2.69.0/24,${cc},,,\n` });
  const tor = (ips: string[]): TextSource => ({ type: 'tor-exits', name: 'tor.txt', text: `${ips.join('\n')}\n` });
  let a: string;
  let b: string;
  let live: string;

  beforeAll(async () => {
    for (const d of ['a', 'b']) mkdirSync(join(tmp, d), { recursive: true });
    a = await buildFromTexts(join(tmp, 'a'), 'a.idx', [GEO, geofeed('DE'), tor(['81.2.70.1', '81.2.70.2'])]);
    b = await buildFromTexts(join(tmp, 'b'), 'b.idx', [GEO, geofeed('FR'), tor(['81.2.70.1'])]);
    live = join(tmp, 'live.idx');
  }, 60_000);

  test('A -> B -> A: each swap logs its headline; the second lists the country and the flag that flapped', async () => {
    const logs: string[] = [];
    const o = { indexPath: live, log: (l: string) => logs.push(l), now: () => Date.parse('2026-11-20T00:00:00Z') };
    const first = await recordSwap(a, b, o);
    expect(first!.flapping).toEqual([]);
    expect(first!.changed.country).toEqual({ ipv4_addresses: 256, ipv6_64s: 0 });
    expect(first!.unflagged.is_tor).toEqual({ ipv4_addresses: 1, ipv6_64s: 0 });
    expect(logs).toEqual([expect.stringMatching(/^feeds: swap changed country 256 IPv4 0 \/64, .*is_tor \+0\/-1 IPv4 \+0\/-0 \/64/)]);
    const second = await recordSwap(b, a, o);
    expect(second!.flapping).toEqual([
      { field: 'country', family: 4, range: '81.2.69.0 - 81.2.69.255', cidr: '81.2.69.0/24', values: ['DE', 'FR', 'DE'], changes: 2 },
      { field: 'is_proxy', family: 4, range: '81.2.70.2 - 81.2.70.2', cidr: '81.2.70.2/32', values: [true, false, true], changes: 2 },
      { field: 'is_tor', family: 4, range: '81.2.70.2 - 81.2.70.2', cidr: '81.2.70.2/32', values: [true, false, true], changes: 2 },
    ]);
    expect(logs[1]).toContain('; 3 range(s) flapping');
    expect(loadSwapSummaries(swapSummariesPath(live))).toHaveLength(2);
  }, 60_000);

  test(`the file keeps the last ${SWAPS_KEPT} swaps`, async () => {
    const o = { indexPath: join(tmp, 'kept.idx'), log: () => {}, now: () => Date.now() };
    for (let i = 0; i < SWAPS_KEPT + 2; i++) await recordSwap(i % 2 ? b : a, i % 2 ? a : b, o);
    expect(loadSwapSummaries(swapSummariesPath(o.indexPath))).toHaveLength(SWAPS_KEPT);
  }, 60_000); // twelve diffs of two builds: near Bun's 5 s default under load

  test('a changed range that changes once is not flapping; one that returns is', () => {
    const swap = (before: string, after: string, range = '1.0.0.0 - 1.0.0.255') => ({ ranges: [{ field: 'country' as const, family: 4 as const, range, cidr: null, before, after }] }) as never;
    expect(flappingOf([swap('DE', 'FR'), swap('FR', 'NL')])).toEqual([]);
    expect(flappingOf([swap('DE', 'FR'), swap('FR', 'NL'), swap('NL', 'DE')]).map((f) => f.values)).toEqual([['DE', 'FR', 'NL', 'DE']]);
    // Other bounds are another range.
    expect(flappingOf([swap('DE', 'FR'), swap('FR', 'DE', '1.0.0.0 - 1.0.0.127')])).toEqual([]);
  });
});

describe('a refresher swap records its summary; the admin sees it', () => {
  let publisher: Publisher;
  let server: RunningServer;
  let refresher: FeedRefresher;
  const logs: string[] = [];
  const contract = new OpenApiResponses(JSON.parse(openApiDocumentText(false)));

  beforeAll(async () => {
    publisher = startPublisher(join(tmp, 'publisher'), [TOR]);
    const dir = join(tmp, 'server');
    mkdirSync(dir, { recursive: true });
    const index = join(dir, 'ipintel.idx');
    const src = join(FIXTURE_FEEDS_DIR, CLOUDFLARE);
    await buildIndex({ sources: [{ options: { type: 'cidr-list', category: 'content', path: src }, absPath: src, displayPath: CLOUDFLARE }], out: index, quiet: true, managedBy: 'server' });
    writeTestCatalog(join(dir, 'catalog.json'), [TOR], publisher.url);
    server = await startTestServer({ IPINTEL_INDEX: index, IPINTEL_FEEDS_DIR: join(dir, 'feeds'), IPINTEL_FEEDS_CATALOG: join(dir, 'catalog.json'), IPINTEL_ADMIN_TOKEN: ADMIN });
    const status = startFeedRefresher(server.services.config, server.services.index, {
      ...TEST_REFRESH,
      log: (line) => logs.push(line),
      now: () => Date.now(),
      runChild: countingBuilds([]),
    });
    server.services.feeds = status;
    refresher = status.refresher!;
    await refresher.refresh();
    await refresher.lastSwapSummary;
  }, 120_000);
  afterAll(async () => {
    await refresher?.stop();
    await server?.stop();
    publisher?.stop();
  });

  /** The Tor snapshot's exits: IPv4 addresses, and the IPv6 /64s they fall in. */
  function exits(): { v4: number; v6: number } {
    const v4 = new Set<number>();
    const v6 = new Set<bigint>();
    for (const line of readFileSync(join(FIXTURE_FEEDS_DIR, TOR), 'utf8').split('\n')) {
      const ip = parseIp(line.trim());
      if (ip?.family === 4) v4.add(ip.value as number);
      else if (ip) v6.add((ip.value as bigint) >> 64n);
    }
    return { v4: v4.size, v6: v6.size };
  }

  test('one log line of headline counts: the Tor exits newly flagged', () => {
    const { v4, v6 } = exits();
    expect(v4).toBeGreaterThan(100);
    const line = logs.find((l) => l.startsWith('feeds: swap changed'));
    expect(line).toContain(`is_tor +${v4}/-0 IPv4 +${v6}/-0 /64`);
  });

  test('/v1/data/status shows the summaries to the admin only, in the declared shape', async () => {
    const get = async (headers: Record<string, string>) => {
      const res = await fetch(`${server.url}/v1/data/status`, { headers });
      const text = await res.text();
      expect(contract.problems({ method: 'GET', path: '/v1/data/status', status: res.status, headers: res.headers, text })).toEqual([]);
      return JSON.parse(text);
    };
    const admin = await get({ authorization: `Bearer ${ADMIN}` });
    expect(admin.feeds.swaps).toHaveLength(1);
    expect(admin.feeds.swaps[0].flagged.is_tor.ipv4_addresses).toBe(exits().v4);
    expect(admin.feeds.swaps[0].unflagged.is_tor).toEqual({ ipv4_addresses: 0, ipv6_64s: 0 });
    const anonymous = await get({});
    expect(anonymous.feeds.swaps).toBeUndefined();
  });

  test('/metrics exports the last swap headline counts', async () => {
    await server.services.metrics.init();
    const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const text = await res.text();
    expect(text).toContain(`ipintel_last_swap_flagged{field="is_tor",family="ipv4"} ${exits().v4}`);
    expect(text).toMatch(/ipintel_last_swap_changed\{field="country",family="ipv4"\} 0/);
    expect(text).toMatch(/ipintel_last_swap_flapping_ranges 0/);
  });
});
