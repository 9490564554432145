/**
 * The refresher across real processes: two servers on one index fetch and
 * build once between them (the lock file) and both serve the new index; and
 * `bun run start` offline (the catalog on a closed port) starts as fast as
 * before, logs one line about it and reports the missing sources.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';
import { startPublisher, writeTestCatalog, type Publisher } from './publisher.ts';

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
  void (async () => {
    let rest = '';
    for await (const chunk of stream) {
      rest += new TextDecoder().decode(chunk);
      const lines = rest.split('\n');
      rest = lines.pop()!;
      into.push(...lines);
    }
  })();
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
  const child = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, PORT: '0', HOST: '127.0.0.1', IPINTEL_DB: ':memory:', IPINTEL_DNS_SERVERS: '127.0.0.1:9', ...env }, stdout: 'pipe', stderr: 'pipe' });
  collect(child.stdout as ReadableStream<Uint8Array>, out);
  collect(child.stderr as ReadableStream<Uint8Array>, err);
  children.push(child);
  return child;
}

async function isTor(url: string): Promise<boolean> {
  const res = await fetch(`${url}/v1/ip/${TOR_EXIT}`);
  return ((await res.json()) as { classification: { is_tor: boolean } }).classification.is_tor;
}

describe('several processes on one host', () => {
  test('two processes started together: one fetch and one build, both serve the new index', async () => {
    const dir = join(tmp, 'two');
    const index = await serverIndex(dir);
    writeTestCatalog(join(dir, 'catalog.json'), [TOR, CLOUDFLARE], publisher.url);
    const env = { IPINTEL_INDEX: index, IPINTEL_FEEDS_DIR: join(dir, 'feeds'), IPINTEL_FEEDS_CATALOG: join(dir, 'catalog.json') };
    const outs: string[][] = [[], []];
    const errs: string[][] = [[], []];
    for (let i = 0; i < 2; i++) spawn(['bun', 'test/feeds/serve-process.ts'], env, outs[i], errs[i]);
    const urls: string[] = [];
    for (let i = 0; i < 2; i++) {
      await until(`process ${i} to listen`, () => outs[i].some((l) => l.startsWith('listening ')));
      urls.push(outs[i].find((l) => l.startsWith('listening '))!.slice('listening '.length));
    }
    await until('both processes to serve the refreshed index', async () => (await isTor(urls[0])) && (await isTor(urls[1])));
    const logs = errs.flat();
    expect(logs.filter((l) => l.includes('feeds: building'))).toHaveLength(1);
    expect(logs.filter((l) => l.includes('feeds: swapped in'))).toHaveLength(1);
    expect(logs.filter((l) => l.includes('feeds: picked up'))).toHaveLength(1);
    expect(publisher.sent.get(TOR)).toBe(1);
    expect(publisher.sent.get(CLOUDFLARE)).toBe(1);
  }, 90_000);
});

describe('several workers in one server', () => {
  test('two workers: one fetch and one build, the swap reaches both workers at one generation, nothing picked up twice', async () => {
    const dir = join(tmp, 'workers');
    const index = await serverIndex(dir);
    writeTestCatalog(join(dir, 'catalog.json'), [TOR, CLOUDFLARE], publisher.url);
    const sentBefore = publisher.sent.get(TOR) ?? 0;
    const out: string[] = [];
    const err: string[] = [];
    spawn(['bun', 'src/main.ts'], {
      IPINTEL_INDEX: index,
      IPINTEL_FEEDS_DIR: join(dir, 'feeds'),
      IPINTEL_FEEDS_CATALOG: join(dir, 'catalog.json'),
      IPINTEL_DB: join(dir, 'accounts.sqlite'),
      IPINTEL_WORKERS: '2',
    }, out, err);
    await until('the server to listen', () => err.some((l) => l.startsWith('ipintel listening on')));
    const port = Number(/:(\d+) \(index/.exec(err.find((l) => l.startsWith('ipintel listening on'))!)![1]);
    const url = `http://127.0.0.1:${port}`;
    await until('the swap', () => err.some((l) => l.includes('feeds: swapped in')));
    // New connections spread over both workers (reusePort): every one serves the refreshed index.
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${url}/v1/ip/${TOR_EXIT}`, { headers: { connection: 'close' } });
      expect(((await res.json()) as { classification: { is_tor: boolean } }).classification.is_tor).toBe(true);
    }
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200); // 503 when the workers serve different generations
    expect(((await health.json()) as { index: { generation: number } }).index.generation).toBe(2);
    // Let the other worker's pickup timer run once: it must not reload what it already serves.
    await Bun.sleep(1_000);
    expect(err.filter((l) => l.includes('feeds: building'))).toHaveLength(1);
    expect(err.filter((l) => l.includes('feeds: swapped in'))).toHaveLength(1);
    expect(err.filter((l) => l.includes('feeds: picked up'))).toHaveLength(0);
    expect((publisher.sent.get(TOR) ?? 0) - sentBefore).toBe(1);
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
