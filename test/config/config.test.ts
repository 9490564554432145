/** The operator surface of interface.md: environment defaults and the feeds folder of the default build. */
import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultSources, packageSources, withDataDefaults } from '../../index-builder/default-sources.ts';
import { connectionCapFor, DEFAULT_FEEDS_MEMORY_MB, loadConfig, MAX_WORKERS } from '../../src/config.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';

describe('loadConfig', () => {
  test('defaults are the ones interface.md names', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      indexPath: 'data/ipintel.idx',
      dbPath: 'data/ipintel.sqlite',
      feedsDir: 'feeds',
      adminToken: null,
      trustProxy: [],
      dnsServers: [],
      rdapBase: null,
      radarUrl: null,
      upgradeUrl: null,
      rateLimitStore: null,
      rateLimits: true,
      policyPath: null,
      feedsRefreshMs: 86_400_000,
      feedsCatalog: null,
      feedsManifest: null,
    });
    expect(c.oauth.provider).toBeNull();
  });

  test('IPINTEL_WORKERS: default the usable CPUs, a whole number 1..MAX_WORKERS, anything else refused', () => {
    expect(loadConfig({}).workers).toBe(Math.min(MAX_WORKERS, availableParallelism()));
    expect(loadConfig({ IPINTEL_WORKERS: '1' }).workers).toBe(1);
    expect(loadConfig({ IPINTEL_WORKERS: ' 4 ' }).workers).toBe(4);
    for (const bad of ['0', '-1', '1.5', 'two', '100000']) expect(() => loadConfig({ IPINTEL_WORKERS: bad })).toThrow(/IPINTEL_WORKERS must be a whole number/);
  });

  test('IPINTEL_MAX_CONNECTIONS: unset derives from the descriptor limit; a whole number of at least 1; anything else refused', () => {
    expect(loadConfig({}).maxConnections).toBeNull();
    expect(loadConfig({ IPINTEL_MAX_CONNECTIONS: '500' }).maxConnections).toBe(500);
    for (const bad of ['0', '-5', '1.5', 'many']) expect(() => loadConfig({ IPINTEL_MAX_CONNECTIONS: bad })).toThrow(/IPINTEL_MAX_CONNECTIONS must be/);
    expect(connectionCapFor(1024)).toBe(896);
    expect(connectionCapFor(256)).toBe(192);
    expect(connectionCapFor(64)).toBe(16);
    expect(connectionCapFor(1_048_576)).toBe(917_504);
  });

  test('values are read and lists split', () => {
    const c = loadConfig({
      PORT: '9000',
      IPINTEL_TRUST_PROXY: 'loopback, 10.0.0.0/8',
      IPINTEL_DNS_SERVERS: '127.0.0.1:5353,[::1]:53',
      IPINTEL_RATE_LIMITS: 'OFF',
      IPINTEL_OAUTH_PROVIDER: 'oidc',
      IPINTEL_FEEDS_DIR: '/srv/feeds',
    });
    expect(c.port).toBe(9000);
    expect(c.trustProxy).toEqual(['loopback', '10.0.0.0/8']);
    expect(c.dnsServers).toEqual(['127.0.0.1:5353', '[::1]:53']);
    expect(c.rateLimits).toBe(false);
    expect(c.oauth.provider).toBe('oidc');
    expect(c.feedsDir).toBe('/srv/feeds');
  });

  test('IPINTEL_RATE_LIMITS takes every boolean word of interface.md, in any case', () => {
    for (const off of ['off', 'false', '0', 'no', 'OFF', ' False ', 'No']) expect(loadConfig({ IPINTEL_RATE_LIMITS: off }).rateLimits).toBe(false);
    for (const on of ['on', 'true', '1', 'yes', 'YES', ' On ']) expect(loadConfig({ IPINTEL_RATE_LIMITS: on }).rateLimits).toBe(true);
    expect(loadConfig({ IPINTEL_RATE_LIMITS: '' }).rateLimits).toBe(true);
  });

  test('a boolean word that is neither on nor off is refused, not read as on', () => {
    for (const bad of ['disabled', 'nope', '2', 'of', 'onn']) {
      expect(() => loadConfig({ IPINTEL_RATE_LIMITS: bad })).toThrow(`IPINTEL_RATE_LIMITS must be on/true/1/yes or off/false/0/no (got "${bad}")`);
    }
  });

  test('IPINTEL_TRUST_PROXY_HEADER: x-forwarded-for by default, forwarded on request, anything else refused', () => {
    expect(loadConfig({}).trustProxyHeader).toBe('x-forwarded-for');
    expect(loadConfig({ IPINTEL_TRUST_PROXY_HEADER: 'Forwarded' }).trustProxyHeader).toBe('forwarded');
    expect(loadConfig({ IPINTEL_TRUST_PROXY_HEADER: 'X-Forwarded-For' }).trustProxyHeader).toBe('x-forwarded-for');
    for (const bad of ['x-real-ip', 'both', 'forwarded,x-forwarded-for']) {
      expect(() => loadConfig({ IPINTEL_TRUST_PROXY_HEADER: bad })).toThrow(/IPINTEL_TRUST_PROXY_HEADER must be x-forwarded-for or forwarded/);
    }
  });

  test('bad values are refused with the variable named', () => {
    expect(() => loadConfig({ PORT: 'http' })).toThrow(/PORT/);
    expect(() => loadConfig({ IPINTEL_OAUTH_PROVIDER: 'facebook' })).toThrow(/IPINTEL_OAUTH_PROVIDER/);
  });
});

describe('feed refresher settings', () => {
  test('IPINTEL_FEEDS_REFRESH takes durations and off', () => {
    expect(loadConfig({ IPINTEL_FEEDS_REFRESH: '6h' }).feedsRefreshMs).toBe(6 * 3_600_000);
    expect(loadConfig({ IPINTEL_FEEDS_REFRESH: '30m' }).feedsRefreshMs).toBe(30 * 60_000);
    expect(loadConfig({ IPINTEL_FEEDS_REFRESH: '7d' }).feedsRefreshMs).toBe(7 * 86_400_000);
    for (const off of ['off', 'OFF', 'false', '0', 'no']) expect(loadConfig({ IPINTEL_FEEDS_REFRESH: off }).feedsRefreshMs).toBeNull();
    expect(loadConfig({ IPINTEL_FEEDS_REFRESH: ' ' }).feedsRefreshMs).toBe(86_400_000);
  });

  test('a bad IPINTEL_FEEDS_REFRESH is refused with its name', () => {
    for (const bad of ['daily', '6', '-1h', '0.1s', '500d']) expect(() => loadConfig({ IPINTEL_FEEDS_REFRESH: bad })).toThrow(/IPINTEL_FEEDS_REFRESH must be a duration/);
  });

  test('IPINTEL_FEEDS_CATALOG and IPINTEL_FEEDS_MANIFEST are read as paths', () => {
    const c = loadConfig({ IPINTEL_FEEDS_CATALOG: '/srv/mirror/catalog.json', IPINTEL_FEEDS_MANIFEST: '/srv/feeds.json' });
    expect(c.feedsCatalog).toBe('/srv/mirror/catalog.json');
    expect(c.feedsManifest).toBe('/srv/feeds.json');
  });

  test('IPINTEL_FEEDS_MEMORY_MB: the refresh child\'s cap in MiB, the measured default when unset, a bad one refused with its name', () => {
    expect(loadConfig({}).feedsMemoryMb).toBe(DEFAULT_FEEDS_MEMORY_MB);
    expect(loadConfig({ IPINTEL_FEEDS_MEMORY_MB: '6144' }).feedsMemoryMb).toBe(6144);
    for (const bad of ['3G', '-1', '1.5', '64']) expect(() => loadConfig({ IPINTEL_FEEDS_MEMORY_MB: bad })).toThrow(/IPINTEL_FEEDS_MEMORY_MB must be a whole number of MiB, at least 128/);
  });
});

describe('build-index settings read once through the configuration', () => {
  test('IPINTEL_DATA_DIR, IPINTEL_INDEX_SIGNING_KEY and IPINTEL_PUBLISH_KEEP: unset, set, and a bad keep refused with its name', () => {
    const unset = loadConfig({});
    expect({ dataDir: unset.dataDir, key: unset.indexSigningKey, keep: unset.publishKeep }).toEqual({ dataDir: null, key: null, keep: 3 });
    const set = loadConfig({ IPINTEL_DATA_DIR: ' /srv/data ', IPINTEL_INDEX_SIGNING_KEY: '/etc/ipintel/sign.key', IPINTEL_PUBLISH_KEEP: '7' });
    expect({ dataDir: set.dataDir, key: set.indexSigningKey, keep: set.publishKeep }).toEqual({ dataDir: '/srv/data', key: '/etc/ipintel/sign.key', keep: 7 });
    for (const bad of ['0', 'many', '1.5']) expect(() => loadConfig({ IPINTEL_PUBLISH_KEEP: bad })).toThrow(/IPINTEL_PUBLISH_KEEP/);
  });

  test('IPINTEL_DATA_REGISTRY: unset is the public npm registry, a mirror URL (trailing slash dropped), off never fetches, anything else refused', () => {
    expect(loadConfig({}).dataRegistry).toBe('https://registry.npmjs.org');
    expect(loadConfig({ IPINTEL_DATA_REGISTRY: 'http://npm.internal:4873/npm/' }).dataRegistry).toBe('http://npm.internal:4873/npm');
    expect(loadConfig({ IPINTEL_DATA_REGISTRY: 'OFF' }).dataRegistry).toBeNull();
    for (const bad of ['registry.npmjs.org', 'ftp://mirror/', 'https://mirror/?x=1']) expect(() => loadConfig({ IPINTEL_DATA_REGISTRY: bad })).toThrow(`IPINTEL_DATA_REGISTRY must be an http(s) URL of an npm registry, or off (got "${bad}")`);
  });
});

describe('IPINTEL_MEMORY_MB', () => {
  test('unset or blank: null (the memos keep their default sizes)', () => {
    expect(loadConfig({}).memoryMb).toBeNull();
    expect(loadConfig({ IPINTEL_MEMORY_MB: ' ' }).memoryMb).toBeNull();
  });
  test('a whole number of MiB, at least the minimum', () => {
    expect(loadConfig({ IPINTEL_MEMORY_MB: '256' }).memoryMb).toBe(256);
    for (const bad of ['64', '256MB', '-1', '1.5', 'lots']) expect(() => loadConfig({ IPINTEL_MEMORY_MB: bad })).toThrow('IPINTEL_MEMORY_MB must be a whole number of MiB');
  });
});

describe('the default build reads IPINTEL_FEEDS_DIR/feeds.json when present', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipintel-feeds-dir-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('without feeds.json: the data packages alone', () => {
    expect(defaultSources(dir)).toEqual(packageSources());
  });

  test('with feeds.json: the packages, then every feed of it', () => {
    writeFileSync(join(dir, 'feeds.json'), JSON.stringify({ sources: [{ type: 'tor-exits', path: join(FIXTURE_FEEDS_DIR, 'tor/exit-addresses') }] }));
    const sources = defaultSources(dir);
    expect(sources.slice(0, 4)).toEqual(packageSources());
    expect(sources.slice(4).map((s) => s.options.type)).toEqual(['tor-exits']);
  });
});

describe('a --manifest build adds the data packages it does not replace', () => {
  const entry = (type: string) => ({ options: { type, path: `x.${type}` }, absPath: `/x.${type}`, displayPath: `x.${type}` });
  const types = (manifest: ReturnType<typeof entry>[]) => withDataDefaults(manifest).map((s) => s.options.type);

  test('location and ASN defaults first, then the manifest', () => {
    expect(types([entry('tor-exits'), entry('geofeed')])).toEqual(['geo-mmdb', 'geo-mmdb', 'asn-csv', 'asn-csv', 'tor-exits', 'geofeed']);
  });

  test('a geo-mmdb or geo-csv source replaces the default location; an asn-csv source the default ASN ranges', () => {
    expect(types([entry('geo-csv')])).toEqual(['asn-csv', 'asn-csv', 'geo-csv']);
    expect(types([entry('geo-mmdb'), entry('asn-csv')])).toEqual(['geo-mmdb', 'asn-csv']);
    expect(types([entry('asn-csv')])).toEqual(['geo-mmdb', 'geo-mmdb', 'asn-csv']);
  });
});

describe('what the server writes (its start-up line)', () => {
  test('accounts, the refresher, a pull and a publisher each name their folder; a read-only deployment names none', async () => {
    const { writablePathsOf } = await import('../../src/config.ts');
    expect(writablePathsOf(loadConfig({ IPINTEL_DB: '/var/lib/ipintel/a.sqlite', IPINTEL_INDEX: '/srv/idx/ipintel.idx' }))).toEqual([
      '/var/lib/ipintel (accounts database)',
      '/srv/idx and feeds (the refresher, for an index the server built itself)',
      '/srv/idx/history (the history of served indexes, IPINTEL_HISTORY)',
    ]);
    expect(writablePathsOf(loadConfig({ IPINTEL_DB: ':memory:', IPINTEL_INDEX: '/ro/ipintel.idx', IPINTEL_FEEDS_REFRESH: 'off', IPINTEL_HISTORY: 'off' }))).toEqual([]);
    expect(writablePathsOf(loadConfig({ IPINTEL_DB: ':memory:', IPINTEL_INDEX: '/ro/ipintel.idx', IPINTEL_FEEDS_REFRESH: 'off', IPINTEL_HISTORY_DIR: '/var/lib/ipintel/history' }))).toEqual([
      '/var/lib/ipintel/history (the history of served indexes, IPINTEL_HISTORY)',
    ]);
    expect(writablePathsOf(loadConfig({ IPINTEL_DB: 'postgres://u@h/db', IPINTEL_INDEX: '/data/ipintel.idx', IPINTEL_INDEX_URL: 'https://x.example/ipintel.idx', IPINTEL_INDEX_PUBKEY: 'ed25519:AAAA' }))).toEqual([
      '/data (the pulled index and its state)',
      '/data/history (the history of served indexes, IPINTEL_HISTORY)',
    ]);
  });
});

describe('IPINTEL_HISTORY', () => {
  test('30d beside the index by default; a duration; off; anything else refused', () => {
    expect(loadConfig({ IPINTEL_INDEX: '/srv/idx/ipintel.idx' }).history).toEqual({ dir: '/srv/idx/history', retentionMs: 30 * 86_400_000 });
    expect(loadConfig({ IPINTEL_HISTORY: '90d', IPINTEL_HISTORY_DIR: '/h' }).history).toEqual({ dir: '/h', retentionMs: 90 * 86_400_000 });
    expect(loadConfig({ IPINTEL_HISTORY: 'off' }).history).toBeNull();
    expect(() => loadConfig({ IPINTEL_HISTORY: 'forever' })).toThrow('IPINTEL_HISTORY must be a duration');
  });
});

describe('pull and publisher settings (IPINTEL_INDEX_*, IPINTEL_ROLE, IPINTEL_PUBLISH_*)', () => {
  const pull = { IPINTEL_INDEX_URL: 'https://cdn.example.org/ipintel.idx', IPINTEL_INDEX_PUBKEY: 'ed25519:AAAA' };
  const publisher = { IPINTEL_ROLE: 'publisher', IPINTEL_PUBLISH_DIR: '/srv/pub', IPINTEL_INDEX_SIGNING_KEY: '/etc/k.key' };

  test('a pull: poll 5m by default, no fallback, and the feed refresher off', () => {
    const c = loadConfig(pull);
    expect(c.pull).toEqual({ url: pull.IPINTEL_INDEX_URL, publicKey: 'ed25519:AAAA', pollMs: 300_000, maxAgeMs: 30 * 86_400_000, fallback: null });
    expect(c.feedsRefreshMs).toBeNull();
    expect(loadConfig({ ...pull, IPINTEL_INDEX_POLL: '30s', IPINTEL_INDEX_FALLBACK: 'default' }).pull).toMatchObject({ pollMs: 30_000, fallback: 'default' });
    expect(loadConfig({}).pull).toBeNull();
  });

  test('an unverifiable or malformed pull is refused at start', () => {
    expect(() => loadConfig({ IPINTEL_INDEX_URL: pull.IPINTEL_INDEX_URL })).toThrow(/IPINTEL_INDEX_PUBKEY/);
    expect(() => loadConfig({ ...pull, IPINTEL_INDEX_URL: 'ftp://x/ipintel.idx' })).toThrow(/http\(s\) URL/);
    expect(() => loadConfig({ ...pull, IPINTEL_INDEX_FALLBACK: 'build' })).toThrow(/IPINTEL_INDEX_FALLBACK/);
    expect(() => loadConfig({ ...pull, IPINTEL_INDEX_POLL: 'often' })).toThrow(/IPINTEL_INDEX_POLL/);
    expect(() => loadConfig({ ...pull, IPINTEL_INDEX_MAX_AGE: 'forever' })).toThrow(/IPINTEL_INDEX_MAX_AGE/);
    expect(() => loadConfig({ ...pull, IPINTEL_INDEX_POLL: '1h', IPINTEL_INDEX_MAX_AGE: '30m' })).toThrow(/longer than IPINTEL_INDEX_POLL/);
    expect(loadConfig({ ...pull, IPINTEL_INDEX_MAX_AGE: '7d' }).pull?.maxAgeMs).toBe(7 * 86_400_000);
  });

  test('the publisher role needs its folder and key, keeps 3 versions by default, and never pulls', () => {
    expect(loadConfig({}).role).toBe('server');
    expect(loadConfig(publisher)).toMatchObject({ role: 'publisher', publish: { dir: '/srv/pub', signingKeyPath: '/etc/k.key', keep: 3 } });
    expect(loadConfig({ ...publisher, IPINTEL_PUBLISH_KEEP: '7' }).publish?.keep).toBe(7);
    expect(() => loadConfig({ ...publisher, IPINTEL_PUBLISH_DIR: '' })).toThrow(/IPINTEL_PUBLISH_DIR/);
    expect(() => loadConfig({ ...publisher, IPINTEL_INDEX_SIGNING_KEY: '' })).toThrow(/IPINTEL_INDEX_SIGNING_KEY/);
    expect(() => loadConfig({ ...publisher, ...pull })).toThrow(/cannot also pull/);
    expect(() => loadConfig({ ...publisher, IPINTEL_PUBLISH_KEEP: '0' })).toThrow(/IPINTEL_PUBLISH_KEEP/);
    expect(() => loadConfig({ IPINTEL_ROLE: 'edge' })).toThrow(/IPINTEL_ROLE/);
  });
});
