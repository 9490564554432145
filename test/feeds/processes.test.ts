/**
 * The refresher across real processes: two servers on one index fetch and
 * build once between them (the lock file) and both serve the new index; and
 * `bun run start` offline (the catalog on a closed port) starts as fast as
 * before, logs one line about it and reports the missing sources.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';
import { startPublisher, writeTestCatalog, type Publisher } from './publisher.ts';
import { readLines } from '../../src/file-io/read-lines.ts';

const ROOT = join(import.meta.dir, '..', '..');
const TOR = 'tor/torbulkexitlist';
const CLOUDFLARE = 'cloud/cloudflare-ips-v4.txt';
const TOR_EXIT = '185.241.208.232';

let tmp: string;
let publisher: Publisher;
const children: Bun.Subprocess[] = [];

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'ipintel-refresher-procs-'));
  publisher = startPublisher(join(tmp, 'publisher'), [TOR, CLOUDFLARE]);
});

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await Promise.all(children.map((c) => c.exited));
  publisher.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** A small index the server built itself, in `dir`. */
async function serverIndex(dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const out = join(dir, 'ipintel.idx');
  const src = join(FIXTURE_FEEDS_DIR, CLOUDFLARE);
  await buildIndex({ sources: [{ options: { type: 'cidr-list', category: 'content', path: src }, absPath: src, displayPath: CLOUDFLARE }], out, quiet: true, managedBy: 'server' });
  return out;
}

/** Collects a stream's lines as they come. */
function collect(stream: ReadableStream<Uint8Array>, into: string[]): void {
  void readLines(stream, (line) => into.push(line)).catch(() => undefined);
}

/** Polls `check` until it holds (bounded). */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

function spawn(cmd: string[], env: Record<string, string>, out: string[], err: string[]): Bun.Subprocess {
  const child = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, PORT: '0', HOST: '127.0.0.1', IPINTEL_DB: ':memory:', IPINTEL_DNS_SERVERS: '127.0.0.1:9', IPINTEL_RATE_LIMITS: 'off', ...env }, stdout: 'pipe', stderr: 'pipe' });
  collect(child.stdout as ReadableStream<Uint8Array>, out);
  collect(child.stderr as ReadableStream<Uint8Array>, err);
  children.push(child);
  return child;
}

async function isTor(url: string): Promise<boolean> {
  const res = await fetch(`${url}/v1/ip/${TOR_EXIT}`);
  const body = (await res.json()) as { classification?: { is_tor: boolean } };
  if (!body.classification) throw new Error(`/v1/ip answered ${res.status} ${JSON.stringify(body)}`);
  return body.classification.is_tor;
}

/** The URL a test/feeds/serve-host.ts process printed. */
async function listeningUrl(out: string[], what: string): Promise<string> {
  await until(`${what} to listen`, () => out.some((l) => l.startsWith('listening ')));
  return out.find((l) => l.startsWith('listening '))!.slice('listening '.length);
}

/** The lock file's holder pid (null: none). */
function lockHolder(index: string): number | null {
  try {
    return JSON.parse(readFileSync(`${index}.feeds.lock`, 'utf8')).pid;
  } catch {
    return null;
  }
}

const HOST = ['bun', 'test/feeds/serve-host.ts'];

describe('several processes on one host', () => {
  test('two processes started together: one fetch and one build, both serve the new index (the second picks it up)', async () => {
    const dir = join(tmp, 'two');
    const index = await serverIndex(dir);
    writeTestCatalog(join(dir, 'catalog.json'), [TOR, CLOUDFLARE], publisher.url);
    const env = { IPINTEL_INDEX: index, IPINTEL_FEEDS_DIR: join(dir, 'feeds'), IPINTEL_FEEDS_CATALOG: join(dir, 'catalog.json'), IPINTEL_WORKERS: '1', TEST_RETRY_MS: '300' };
    const outs: string[][] = [[], []];
    const errs: string[][] = [[], []];
    for (let i = 0; i < 2; i++) spawn(HOST, env, outs[i], errs[i]);
    const urls = [await listeningUrl(outs[0], 'process 0'), await listeningUrl(outs[1], 'process 1')];
    await until('both processes to serve the refreshed index', async () => (await isTor(urls[0])) && (await isTor(urls[1])));
    const logs = errs.flat();
    expect(logs.filter((l) => l.includes('feeds: building'))).toHaveLength(1);
    expect(logs.filter((l) => l.includes('feeds: swapped in'))).toHaveLength(1);
    expect(logs.filter((l) => l.includes('feeds: picked up'))).toHaveLength(1);
    expect(publisher.sent.get(TOR)).toBe(1);
    expect(publisher.sent.get(CLOUDFLARE)).toBe(1);
  }, 90_000);

  test('the lock holder killed mid-refresh: another process takes over only once the heartbeat lapsed, then serves the result', async () => {
    const dir = join(tmp, 'takeover');
    const index = await serverIndex(dir);
    writeTestCatalog(join(dir, 'catalog.json'), [TOR, CLOUDFLARE], publisher.url);
    const HEARTBEAT = 200;
    const LAPSE = 3_000;
    const env = {
      IPINTEL_INDEX: index,
      IPINTEL_FEEDS_DIR: join(dir, 'feeds'),
      IPINTEL_FEEDS_CATALOG: join(dir, 'catalog.json'),
      IPINTEL_WORKERS: '1',
      TEST_RETRY_MS: '200',
      TEST_HEARTBEAT_MS: String(HEARTBEAT),
      TEST_LOCK_LAPSE_MS: String(LAPSE),
      IPINTEL_ADMIN_TOKEN: 'admin',
    };
    publisher.delayMs = 2_000;
    try {
      const outA: string[] = [];
      const errA: string[] = [];
      const a = spawn(HOST, env, outA, errA);
      await listeningUrl(outA, 'process A');
      await until('A to hold the lock', () => lockHolder(index) === a.pid);
      const outB: string[] = [];
      const errB: string[] = [];
      const b = spawn(HOST, env, outB, errB);
      const urlB = await listeningUrl(outB, 'process B');
      await Bun.sleep(500); // B has tried the held lock at least once
      // B serves meanwhile, and its admin status names the holder: A, not itself.
      const seen = (await (await fetch(`${urlB}/v1/data/status`, { headers: { authorization: 'Bearer admin' } })).json()) as any;
      expect(seen.feeds.lock).toMatchObject({ pid: a.pid, this_process: false, live: true });
      expect(seen.feeds.refresh).toBe('running');
      a.kill('SIGKILL');
      await a.exited;
      // A's last heartbeat (it touches the lock's mtime): the lapse counts from there.
      const lastBeat = statSync(`${index}.feeds.lock`).mtimeMs;
      expect(lockHolder(index)).toBe(a.pid);
      // Meanwhile B keeps trying every 200 ms and is refused until the heartbeat lapses.
      await until('B to take the lock over', () => lockHolder(index) === b.pid, 30_000);
      expect(Date.now() - lastBeat).toBeGreaterThanOrEqual(LAPSE);
      await until('B to serve the refreshed index', () => isTor(urlB), 60_000);
      expect(errB.filter((l) => l.includes('feeds: swapped in'))).toHaveLength(1);
    } finally {
      publisher.delayMs = 0;
    }
  }, 90_000);
});

describe('several workers in one server', () => {
  test('four workers and a slow publisher: one download per feed and one build, by the primary; every worker serves the swap', async () => {
    const dir = join(tmp, 'workers');
    const index = await serverIndex(dir);
    writeTestCatalog(join(dir, 'catalog.json'), [TOR, CLOUDFLARE], publisher.url);
    const sentBefore = { tor: publisher.sent.get(TOR) ?? 0, cloud: publisher.sent.get(CLOUDFLARE) ?? 0 };
    const out: string[] = [];
    const err: string[] = [];
    publisher.delayMs = 1_500;
    try {
      spawn(HOST, {
        IPINTEL_INDEX: index,
        IPINTEL_FEEDS_DIR: join(dir, 'feeds'),
        IPINTEL_FEEDS_CATALOG: join(dir, 'catalog.json'),
        IPINTEL_DB: join(dir, 'accounts.sqlite'),
        IPINTEL_WORKERS: '4',
        IPINTEL_ADMIN_TOKEN: 'admin',
        TEST_RETRY_MS: '200',
      }, out, err);
      const url = await listeningUrl(out, 'the server');
      // While the primary's child downloads, an admin status names the holder: this process, since a moment ago.
      await until('the lock', () => lockHolder(index) !== null);
      const during = (await (await fetch(`${url}/v1/data/status`, { headers: { authorization: 'Bearer admin' } })).json()) as any;
      expect(during.feeds.refresh).toBe('running');
      expect(during.feeds.lock.this_process).toBe(true);
      expect(during.feeds.lock.live).toBe(true);
      expect(Date.now() - Date.parse(during.feeds.lock.since)).toBeLessThan(30_000);
      await until('the swap', () => err.some((l) => l.includes('feeds: swapped in')), 60_000);
    } finally {
      publisher.delayMs = 0;
    }
    const url = out.find((l) => l.startsWith('listening '))!.slice('listening '.length);
    // New connections spread over the workers (reusePort): every one serves the refreshed index.
    for (let i = 0; i < 40; i++) {
      const res = await fetch(`${url}/v1/ip/${TOR_EXIT}`, { headers: { connection: 'close' } });
      expect(((await res.json()) as { classification: { is_tor: boolean } }).classification.is_tor).toBe(true);
    }
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200); // 503 when the workers serve different generations
    expect(((await health.json()) as { index: { generation: number } }).index.generation).toBe(2);
    await Bun.sleep(1_000); // a pickup tick: nothing to pick up, the swap reached every worker
    // The primary refreshes (its lines carry no worker label), once.
    const feedLines = err.filter((l) => l.includes('feeds: '));
    expect(feedLines.every((l) => !l.startsWith('[worker'))).toBe(true);
    expect(err.filter((l) => l.includes('feeds: building'))).toHaveLength(1);
    expect(err.filter((l) => l.includes('feeds: swapped in'))).toHaveLength(1);
    expect(err.filter((l) => l.includes('feeds: picked up'))).toHaveLength(0);
    expect((publisher.sent.get(TOR) ?? 0) - sentBefore.tor).toBe(1);
    expect((publisher.sent.get(CLOUDFLARE) ?? 0) - sentBefore.cloud).toBe(1);
    // Every worker reports the same state (the shared file): fresh, built once.
    const metrics = await (await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer admin' } })).text();
    expect(metrics).toContain('ipintel_feed_builds_total{result="ok"} 1');
    expect(metrics).toContain('ipintel_feed_fetches_total{result="updated"} 2');
  }, 90_000);
});

describe('offline', () => {
  test('the catalog on a closed port: start-up does not wait for it, one log line, status says what is missing and when next', async () => {
    const dir = join(tmp, 'offline');
    const index = await serverIndex(dir);
    const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') });
    const port = closed.port;
    closed.stop(true);
    const paths = [TOR, CLOUDFLARE, 'cloud/cloudflare-ips-v6.txt', 'crawlers/bingbot.json'];
    writeTestCatalog(join(dir, 'catalog.json'), paths, `http://127.0.0.1:${port}/`);
    const out: string[] = [];
    const err: string[] = [];
    spawn(['bun', 'src/main.ts'], { IPINTEL_INDEX: index, IPINTEL_FEEDS_DIR: join(dir, 'feeds'), IPINTEL_FEEDS_CATALOG: join(dir, 'catalog.json'), IPINTEL_ADMIN_TOKEN: 'admin' }, out, err);
    await until('the offline line', () => err.some((l) => l.includes('no publisher reachable')));
    // Start-up did not wait for the feeds: the server listened first.
    const listening = err.findIndex((l) => l.startsWith('ipintel listening on'));
    const offline = err.findIndex((l) => l.includes('no publisher reachable'));
    expect(listening).toBeGreaterThanOrEqual(0);
    expect(listening).toBeLessThan(offline);
    const port2 = Number(/:(\d+) \(index/.exec(err[listening])![1]);
    const status = (await (await fetch(`http://127.0.0.1:${port2}/v1/data/status`, { headers: { authorization: 'Bearer admin' } })).json()) as any;
    expect(status.feeds.kinds.tor.state).toBe('missing');
    // After three unreachable publishers the rest are not tried in this round.
    const reasons = status.feeds.sources.map((x: { reason: string }) => x.reason);
    expect(reasons.slice(0, 3).every((r: string) => r.startsWith('download failed: ') && !r.includes('not attempted'))).toBe(true);
    expect(reasons[3]).toBe('download failed: not attempted, 3 publishers unreachable');
    expect(status.feeds.kinds.tor.missing).toBe(1);
    expect(Date.parse(status.feeds.next_attempt_at)).toBeGreaterThan(Date.now() + 60_000);
    // No error repeated: after a while still one line, and nothing per feed.
    await Bun.sleep(1_500);
    expect(err.filter((l) => l.includes('no publisher reachable'))).toHaveLength(1);
    expect(err.filter((l) => l.includes(TOR))).toHaveLength(0);
    expect(err.filter((l) => l.startsWith('feeds:'))).toHaveLength(2); // the start line and the offline line
  }, 60_000);
});
