/**
 * The feed refresher against a real publisher on 127.0.0.1 serving copies
 * of the shared snapshots: a server on a small index swaps to the refreshed
 * one (a Tor exit becomes is_tor), conditional requests download nothing
 * when nothing changed, a changed feed rebuilds once, and failures keep the
 * previous data serving with their state reported.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import { buildInChild, type ChildBuildRequest } from '../../src/feeds/build-child.ts';
import { startFeedRefresher } from '../../src/feeds/start.ts';
import type { FeedRefresher } from '../../src/feeds/refresher.ts';
import type { RunningServer } from '../../src/server.ts';
import { FEEDS_DIR } from '../helpers/recording-sink.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { startPublisher, writeTestCatalog, type Publisher } from './publisher.ts';

const TOR = 'tor/torbulkexitlist';
const CLOUDFLARE = 'cloud/cloudflare-ips-v4.txt';
const DROP = 'threat/spamhaus-drop_v4.json';
const GOOGLEBOT = 'crawlers/googlebot.json';
const TOR_EXIT = '185.241.208.232';
const HOUR = 3_600_000;

let tmp: string;
let publisher: Publisher;

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'ipintel-refresher-'));
  publisher = startPublisher(join(tmp, 'publisher'), [TOR, CLOUDFLARE, DROP, GOOGLEBOT]);
});

afterAll(() => {
  publisher.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** A small index the server built itself (one cloud list), as a first start leaves it. */
export async function smallServerIndex(out: string): Promise<void> {
  const src = join(FEEDS_DIR, CLOUDFLARE);
  await buildIndex({ sources: [{ options: { type: 'cidr-list', category: 'content', path: src }, absPath: src, displayPath: CLOUDFLARE }], out, quiet: true, managedBy: 'server' });
}

interface Setup {
  server: RunningServer;
  refresher: FeedRefresher;
  dir: string;
  logs: string[];
  builds: ChildBuildRequest[];
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
  const builds: ChildBuildRequest[] = [];
  const clock = { now: Date.now() };
  const status = startFeedRefresher(server.services.config, server.services.index, {
    withDefaults: false,
    limits: { timeoutMs: 5_000, maxBytes: 64 * 1048576, connectTimeoutMs: 1_000 },
    retryBaseMs: 60_000,
    pickupMs: 60_000,
    log: (line) => logs.push(line),
    now: () => clock.now,
    build: (req) => {
      builds.push(req);
      return buildInChild(req, false);
    },
  });
  server.services.feeds = status;
  return { server, refresher: status.refresher!, dir, logs, builds, clock };
}

async function getJson(s: RunningServer, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.url}${path}`, { headers });
  expect(res.status).toBe(200);
  return (await res.json()) as any;
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
    expect(status.feeds.kinds.tor.last_fetch_at).toBe(new Date(s.clock.now).toISOString());
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
