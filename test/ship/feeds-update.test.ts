/**
 * The feed updater against a real HTTP mirror on 127.0.0.1 serving the
 * shared snapshots: first download, refused downloads keeping the previous
 * copy, the manifest and index rewrites, and the reload of a real server.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { startServer, type RunningServer } from '../../src/host/start-server.ts';
import { loadCatalog } from '../../src/feeds/catalog.ts';
import { main } from '../../src/commands/feeds.ts';
import { LOCK_LAPSE_MS } from '../../src/feeds/lock.ts';
import { FEEDS_DIR } from '../helpers/recording-sink.ts';
import { snapshotText, startFeedMirror, type FeedMirror } from './feed-mirror.ts';
import { describeWithShared } from '../helpers/shared-feeds.ts';

describeWithShared('feeds update with the real catalog entries and snapshots', () => {
  /** Real catalog entries (real types, options and limits) whose snapshots the mirror serves. */
  const PATHS = ['crawlers/googlebot.json', 'vpn/x4bnet-vpn-ipv4.txt', 'tor/torbulkexitlist', 'threat/spamhaus-drop_v4.json'];

  let tmp: string;
  let mirror: FeedMirror;

  /** A catalog file holding the real entries for `paths`. */
  function writeCatalog(name: string, paths: string[], extra: object[] = []): string {
    const all = JSON.parse(readFileSync(join(import.meta.dir, '../../feeds/catalog.json'), 'utf8')).feeds as { path: string }[];
    const feeds = paths.map((p) => {
      const f = all.find((x) => x.path === p);
      if (!f) throw new Error(`${p} is not in feeds/catalog.json`);
      return f;
    });
    const path = join(tmp, name);
    writeFileSync(path, JSON.stringify({ feeds: [...feeds, ...extra] }));
    return path;
  }

  /** Runs `feeds update` in-process; the summary goes to stderr as in real runs. */
  function update(dir: string, catalog: string, ...more: string[]): Promise<number> {
    return main(['update', '--dir', dir, '--catalog', catalog, '--mirror', mirror.url, '--index', join(dir, 'index.idx'), '--no-defaults', '--quiet', ...more]);
  }

  /** The manifest's entries. */
  function manifestOf(dir: string): Array<Record<string, string>> {
    return JSON.parse(readFileSync(join(dir, 'feeds.json'), 'utf8')).sources;
  }

  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'ipintel-feeds-'));
    mirror = startFeedMirror();
  });

  afterAll(() => {
    mirror.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  describe('feeds update against a local mirror', () => {
    let dir: string;
    let catalog: string;
    let server: RunningServer | null = null;
    /** A second process mapping the same index (scale-out on one host). */
    let second: RunningServer | null = null;
    const token = 'feeds-test-admin-token';

    beforeAll(() => {
      dir = join(tmp, 'feeds');
      catalog = writeCatalog('catalog.json', PATHS);
    });

    afterAll(async () => {
      await server?.stop();
      await second?.stop();
    });

    test('a first update downloads, validates and publishes every feed, the manifest and the index', async () => {
      expect(await update(dir, catalog)).toBe(0);
      for (const p of PATHS) {
        // Byte-identical copies of what the mirror served.
        expect(readFileSync(join(dir, p))).toEqual(readFileSync(join(FEEDS_DIR, p)));
      }
      const manifest = manifestOf(dir);
      expect(manifest.map((s) => s.path)).toEqual(PATHS);
      expect(manifest[0]).toEqual({ type: 'crawler-ranges', crawler: 'googlebot', path: 'crawlers/googlebot.json' });
      const meta = IndexReader.open(join(dir, 'index.idx')).meta;
      expect(meta.sources.map((s) => s.path)).toEqual(PATHS);
      expect(meta.sources.find((s) => s.path === 'crawlers/googlebot.json')!.rows).toBe(315);
      expect(mirror.requests).toEqual(expect.arrayContaining(PATHS));
    }, 60_000);

    test('a 404, a truncated file, garbage and a shrunken list are refused and every previous copy stays', async () => {
      const before = new Map(PATHS.map((p) => [p, readFileSync(join(dir, p))]));
      const indexMtime = statSync(join(dir, 'index.idx')).mtimeMs;
      const googlebot = await snapshotText('crawlers/googlebot.json');
      const vpnLines = (await snapshotText('vpn/x4bnet-vpn-ipv4.txt')).split('\n');
      mirror.overrides.set('crawlers/googlebot.json', () => new Response(googlebot.slice(0, 1000)));
      const shrunk = vpnLines.slice(0, Math.floor(vpnLines.length * 0.4));
      mirror.overrides.set('vpn/x4bnet-vpn-ipv4.txt', () => new Response(shrunk.join('\n')));
      mirror.overrides.set('tor/torbulkexitlist', () => new Response('<html><body><h1>Service Unavailable</h1>\n<p>try later</p></body></html>\n'));
      mirror.overrides.set('threat/spamhaus-drop_v4.json', () => new Response('gone', { status: 404 }));
      const lines: string[] = [];
      const original = console.error;
      console.error = (...args: unknown[]) => void lines.push(args.join(' '));
      let code: number;
      try {
        code = await update(dir, catalog);
      } finally {
        console.error = original;
        mirror.overrides.clear();
      }
      expect(code).toBe(1);
      const row = (p: string) => lines.join('\n').split('\n').find((l) => l.startsWith(p + ' ')) ?? '';
      // A category and a line at most: the parser's message may quote the copy's bytes.
      expect(row('crawlers/googlebot.json')).toMatch(/kept-previous .*refused: does not parse as crawler-ranges$/);
      expect(row('vpn/x4bnet-vpn-ipv4.txt')).toContain(`refused: shrank from 10862 to ${shrunk.filter((l) => l.trim()).length} rows (60% lost`);
      expect(row('vpn/x4bnet-vpn-ipv4.txt')).toMatch(/^vpn\/x4bnet-vpn-ipv4\.txt +kept-previous +10862 +10862 /);
      expect(row('tor/torbulkexitlist')).toMatch(/kept-previous .*refused: does not parse as tor-exits( \(line \d+\))?$/);
      expect(lines.join('\n')).not.toContain('Service Unavailable');
      expect(row('threat/spamhaus-drop_v4.json')).toMatch(/kept-previous .*HTTP 404/);
      for (const p of PATHS) expect(readFileSync(join(dir, p))).toEqual(before.get(p)!);
      expect(manifestOf(dir).map((s) => s.path)).toEqual(PATHS);
      // Nothing changed, so the index was not rebuilt.
      expect(statSync(join(dir, 'index.idx')).mtimeMs).toBe(indexMtime);
      // No temp file is left beside the copies.
      expect(readdirTree(dir).filter((p) => p.includes('.download-'))).toEqual([]);
    }, 60_000);

    test('a changed feed is published, the index rebuilt and --reload swaps it into every running server', async () => {
      const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', IPINTEL_INDEX: join(dir, 'index.idx'), IPINTEL_DB: ':memory:', IPINTEL_ADMIN_TOKEN: token, IPINTEL_DNS_SERVERS: '127.0.0.1:9' });
      server = await startServer(config);
      second = await startServer(config);
      const health0 = (await (await fetch(`${server.url}/health`)).json()) as { index: { built_at: string; generation: number } };
      expect(health0.index.generation).toBe(1);

      const doc = JSON.parse(await snapshotText('crawlers/googlebot.json')) as { prefixes: unknown[] };
      doc.prefixes.pop();
      mirror.overrides.set('crawlers/googlebot.json', () => new Response(JSON.stringify(doc)));
      process.env.IPINTEL_ADMIN_TOKEN = token;
      let code: number;
      try {
        code = await update(dir, catalog, '--reload', `${server.url}/reload`, '--reload', `${second.url}/reload`);
      } finally {
        delete process.env.IPINTEL_ADMIN_TOKEN;
        mirror.overrides.clear();
      }
      expect(code).toBe(0);
      const meta = IndexReader.open(join(dir, 'index.idx')).meta;
      expect(meta.sources.find((s) => s.path === 'crawlers/googlebot.json')!.rows).toBe(314);
      const health1 = (await (await fetch(`${server.url}/health`)).json()) as { index: { built_at: string; generation: number } };
      expect(health1.index.generation).toBe(2);
      expect(health1.index.built_at).toBe(meta.builtAt);
      expect(health1.index.built_at).not.toBe(health0.index.built_at);
      const health2 = (await (await fetch(`${second.url}/health`)).json()) as { index: { built_at: string; generation: number } };
      expect(health2.index).toMatchObject({ generation: 2, built_at: meta.builtAt });
    }, 60_000);

    test('a reload the server refuses (wrong token) makes the run fail', async () => {
      process.env.IPINTEL_ADMIN_TOKEN = 'not-the-token';
      try {
        expect(await update(dir, catalog, '--force', '--reload', `${server!.url}/reload`)).toBe(1);
      } finally {
        delete process.env.IPINTEL_ADMIN_TOKEN;
      }
      const health = (await (await fetch(`${server!.url}/health`)).json()) as { index: { generation: number } };
      expect(health.index.generation).toBe(2);
    }, 60_000);
  });

  describe('feeds update, manifest bookkeeping', () => {
    test('a feed that never downloaded is left out of the manifest; the operator\'s own entries are kept', async () => {
      const dir = join(tmp, 'bookkeeping');
      const catalog = writeCatalog('catalog-missing.json', ['tor/torbulkexitlist', 'threat/spamhaus-drop_v4.json']);
      mirror.overrides.set('threat/spamhaus-drop_v4.json', () => new Response('nope', { status: 503 }));
      // An operator's hand-added feed, unknown to the catalog.
      writeFileSync(join(tmp, 'mine.txt'), '192.0.2.0/24\n198.51.100.7\n');
      await Bun.write(join(dir, 'mine.txt'), Bun.file(join(tmp, 'mine.txt')));
      writeFileSync(join(dir, 'feeds.json'), JSON.stringify({ sources: [{ type: 'cidr-list', category: 'vpn', provider: 'Mine', path: 'mine.txt' }] }));
      let code: number;
      try {
        code = await update(dir, catalog);
      } finally {
        mirror.overrides.clear();
      }
      expect(code).toBe(1);
      expect(existsSync(join(dir, 'threat/spamhaus-drop_v4.json'))).toBe(false);
      expect(manifestOf(dir)).toEqual([
        { type: 'tor-exits', path: 'tor/torbulkexitlist' },
        { type: 'cidr-list', category: 'vpn', provider: 'Mine', path: 'mine.txt' },
      ]);
      const meta = IndexReader.open(join(dir, 'index.idx')).meta;
      expect(meta.sources.map((s) => [s.path, s.rows])).toEqual([
        ['tor/torbulkexitlist', 1174],
        ['mine.txt', 2],
      ]);
    }, 60_000);

    test('a previous copy that no longer parses is not kept as good', async () => {
      const dir = join(tmp, 'corrupt');
      const catalog = writeCatalog('catalog-corrupt.json', ['crawlers/googlebot.json']);
      await Bun.write(join(dir, 'crawlers/googlebot.json'), '{"prefixes": [');
      mirror.overrides.set('crawlers/googlebot.json', () => new Response('', { status: 500 }));
      try {
        expect(await update(dir, catalog, '--no-build')).toBe(1);
      } finally {
        mirror.overrides.clear();
      }
      expect(manifestOf(dir)).toEqual([]);
      // The next good download replaces it.
      expect(await update(dir, catalog, '--no-build')).toBe(0);
      expect(manifestOf(dir).map((s) => s.path)).toEqual(['crawlers/googlebot.json']);
      expect(readFileSync(join(dir, 'crawlers/googlebot.json'))).toEqual(readFileSync(join(FEEDS_DIR, 'crawlers/googlebot.json')));
    }, 60_000);

    test('a download over --max-mb is refused', async () => {
      const dir = join(tmp, 'too-big');
      const catalog = writeCatalog('catalog-big.json', ['tor/torbulkexitlist']);
      mirror.overrides.set('tor/torbulkexitlist', () => new Response(new Uint8Array(2 * 1048576).fill(0x41)));
      const lines: string[] = [];
      const original = console.error;
      console.error = (...args: unknown[]) => void lines.push(args.join(' '));
      try {
        expect(await update(dir, catalog, '--no-build', '--max-mb', '1')).toBe(1);
      } finally {
        console.error = original;
        mirror.overrides.clear();
      }
      expect(lines.join('\n')).toMatch(/tor\/torbulkexitlist +missing .*larger than 1048576 bytes/);
      expect(existsSync(join(dir, 'tor/torbulkexitlist'))).toBe(false);
    }, 30_000);

    test('a download that stalls is abandoned at --timeout and the run goes on', async () => {
      const dir = join(tmp, 'stall');
      const catalog = writeCatalog('catalog-stall.json', ['crawlers/googlebot.json', 'tor/torbulkexitlist']);
      // Headers and a first chunk, then nothing: the body never ends.
      mirror.overrides.set('crawlers/googlebot.json', () => new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('{"prefixes": [')) })));
      const lines: string[] = [];
      const original = console.error;
      console.error = (...args: unknown[]) => void lines.push(args.join(' '));
      try {
        expect(await update(dir, catalog, '--no-build', '--timeout', '1')).toBe(1);
      } finally {
        console.error = original;
        mirror.overrides.clear();
      }
      const text = lines.join('\n');
      expect(text).toMatch(/crawlers\/googlebot\.json +missing .*timed out after 1 s/);
      expect(text).toMatch(/tor\/torbulkexitlist +updated +1174/);
      expect(manifestOf(dir).map((s) => s.path)).toEqual(['tor/torbulkexitlist']);
    }, 30_000);

    test("while the server's refresher holds the index's lock, an update touches nothing and exits 1", async () => {
      const dir = join(tmp, 'locked');
      const catalog = writeCatalog('catalog-locked.json', ['tor/torbulkexitlist']);
      mkdirSync(dir, { recursive: true });
      const holder = Bun.spawn(['sleep', '30']);
      try {
        writeFileSync(join(dir, 'index.idx.feeds.lock'), JSON.stringify({ pid: holder.pid, processStartedAt: null, token: 'a'.repeat(24), since: Date.now() }));
        const before = mirror.requests.length;
        expect(await update(dir, catalog)).toBe(1);
        expect(mirror.requests.length).toBe(before);
        expect(existsSync(join(dir, 'tor/torbulkexitlist'))).toBe(false);
      } finally {
        holder.kill();
        await holder.exited;
      }
      // Its heartbeat lapsed (the holder is gone): the next run takes it over and leaves no lock behind.
      const lapsed = (Date.now() - LOCK_LAPSE_MS - 1_000) / 1000;
      utimesSync(join(dir, 'index.idx.feeds.lock'), lapsed, lapsed);
      expect(await update(dir, catalog)).toBe(0);
      expect(existsSync(join(dir, 'index.idx.feeds.lock'))).toBe(false);
    }, 30_000);

    test('usage errors exit 2', async () => {
      expect(await main(['update', '--bogus'])).toBe(2);
      expect(await main(['frobnicate'])).toBe(2);
      expect(await main(['update', '--catalog', join(tmp, 'no-such-catalog.json')])).toBe(2);
    });

    test('the bundled catalog is what `feeds list` prints', async () => {
      const lines: string[] = [];
      const original = console.log;
      console.log = (...args: unknown[]) => void lines.push(args.join(' '));
      try {
        expect(await main(['list'])).toBe(0);
      } finally {
        console.log = original;
      }
      const text = lines.join('\n');
      for (const f of loadCatalog()) expect(text).toContain(f.url);
    });

    test('IPINTEL_FEEDS_CATALOG names the catalog when --catalog is not given (the refresher reads the same variable)', async () => {
      const catalog = writeCatalog('catalog-env.json', ['tor/torbulkexitlist']);
      const lines: string[] = [];
      const original = console.log;
      console.log = (...args: unknown[]) => void lines.push(args.join(' '));
      process.env.IPINTEL_FEEDS_CATALOG = catalog;
      try {
        expect(await main(['list'])).toBe(0);
      } finally {
        console.log = original;
        delete process.env.IPINTEL_FEEDS_CATALOG;
      }
      const rows = lines.join('\n').split('\n').filter((l) => l.includes('https://'));
      expect(rows).toHaveLength(1);
      expect(rows[0]).toContain('tor/torbulkexitlist');
    });
  });

  /** Every file path under `dir`, relative. */
  function readdirTree(dir: string): string[] {
    return readdirSync(dir, { recursive: true }).map(String);
  }
});
