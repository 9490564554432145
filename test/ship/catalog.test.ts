/**
 * The feed catalog: it loads, its limits fit the real snapshots (each entry
 * with a snapshot parses with its real parser and meets minRows), it agrees
 * with the shared manifest, and bad entries are refused naming the entry.
 */
import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatalogError, loadCatalog, sourceUrlOf, type CatalogFeed } from '../../src/feeds/catalog.ts';
import { summarizeCopy } from '../../src/feeds/validate.ts';
import { copyRefusal } from '../../src/feeds/bounds.ts';
import { noCoverage, type CopySummary } from '../../src/feeds/copy-summary.ts';
import { FEEDS_DIR } from '../helpers/recording-sink.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

const catalog = loadCatalog();

describe('the bundled catalog', () => {
  test('holds every entry of feeds/catalog.json, each with a publisher URL and a licence', () => {
    const raw = JSON.parse(readFileSync(join(import.meta.dir, '../../feeds/catalog.json'), 'utf8'));
    expect(catalog.length).toBe(raw.feeds.length);
    expect(catalog.length).toBeGreaterThan(40);
    for (const f of catalog) {
      expect(f.url).toMatch(/^https:\/\//);
      expect(f.licence.length).toBeGreaterThan(3);
    }
  });

  testWithShared('every entry with a real snapshot in ../shared/feeds parses within its bounds and passes every check, alone and against itself', async () => {
    const withSnapshot = catalog.filter((f) => existsSync(join(FEEDS_DIR, f.path)));
    expect(withSnapshot.length).toBeGreaterThan(35);
    for (const f of withSnapshot) {
      const summary = await summarizeCopy(f, join(FEEDS_DIR, f.path), f.path, 'sha');
      expect({ path: f.path, ok: summary.rows >= f.minRows }).toEqual({ path: f.path, ok: true });
      expect({ path: f.path, refused: copyRefusal(f, summary, null) }).toEqual({ path: f.path, refused: null });
      expect({ path: f.path, refused: copyRefusal(f, summary, summary) }).toEqual({ path: f.path, refused: null });
    }
  }, 60_000);

  testWithShared('entries the real snapshots\' manifest also lists have its type and options', () => {
    const shared = JSON.parse(readFileSync(join(FEEDS_DIR, 'feeds.json'), 'utf8')).sources as Array<Record<string, string>>;
    let matched = 0;
    for (const s of shared) {
      const f = catalog.find((c) => c.path === s.path);
      if (!f) continue;
      matched++;
      const entry: Record<string, string> = { type: f.type, ...f.options, path: f.path };
      expect(entry).toEqual(s);
    }
    expect(matched).toBeGreaterThan(35);
  });

  test('a mirror URL keeps the feed path', () => {
    const f = catalog.find((c) => c.path === 'crawlers/googlebot.json')!;
    expect(sourceUrlOf(f, null)).toBe(f.url);
    expect(sourceUrlOf(f, 'http://127.0.0.1:9/mirror')).toBe('http://127.0.0.1:9/mirror/crawlers/googlebot.json');
  });
});

describe('catalog errors name the file and the entry', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipintel-catalog-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const good = { type: 'tor-exits', path: 'tor/exits', url: 'https://example.org/exits', publisher: 'x', licence: 'none stated' };
  const load = (feeds: object[]) => {
    const path = join(dir, `c${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, JSON.stringify({ feeds }));
    return () => loadCatalog(path);
  };

  test.each([
    ['a path leaving the feeds folder', { ...good, path: '../etc/passwd' }, /feeds\[1\]: path must be relative/],
    ['an absolute path', { ...good, path: '/etc/passwd' }, /feeds\[1\]: path must be relative/],
    ['the manifest itself', { ...good, path: 'feeds.json' }, /feeds\[1\]: path feeds\.json/],
    ['an unknown type', { ...good, path: 'b', type: 'nope' }, /feeds\[1\]: unknown type "nope"/],
    ['a non-http URL', { ...good, path: 'b', url: 'ftp://x/y' }, /feeds\[1\]: url must be http/],
    ['a missing licence', { ...good, path: 'b', licence: '' }, /feeds\[1\]: missing "licence"/],
    ['minRows 0', { ...good, path: 'b', minRows: 0 }, /feeds\[1\]: minRows/],
    ['maxShrink above 1', { ...good, path: 'b', maxShrink: 2 }, /feeds\[1\]: maxShrink/],
    ['a duplicate path', { ...good }, /feeds\[1\]: path tor\/exits appears twice/],
    ['a cadence that is not a duration', { ...good, path: 'b', cadence: 'hourly' }, /feeds\[1\]: cadence must be a duration/],
    ['a numeric cadence', { ...good, path: 'b', cadence: 3600 }, /feeds\[1\]: cadence must be a duration/],
    ['a size bound of 0', { ...good, path: 'b', maxMb: 0 }, /feeds\[1\]: maxMb must be a positive number/],
    ['allowHosts that is not a list of host names', { ...good, path: 'b', allowHosts: ['x.org/path'] }, /feeds\[1\]: allowHosts must be a list of host names/],
  ])('%s', (_what, bad, message) => {
    const run = load([good, bad]);
    expect(run).toThrow(CatalogError);
    expect(run).toThrow(message);
  });
});

describe('cadence', () => {
  test('the bundled catalog checks Tor exits hourly, cloud ranges daily and PeeringDB weekly; other feeds follow IPINTEL_FEEDS_REFRESH', () => {
    const byPath = new Map(loadCatalog().map((f) => [f.path, f.cadenceMs]));
    expect(byPath.get('tor/torbulkexitlist')).toBe(3_600_000);
    expect(byPath.get('cloud/aws-ip-ranges.json')).toBe(86_400_000);
    expect(byPath.get('asn/peeringdb-net.json')).toBe(7 * 86_400_000);
    expect(byPath.get('rir/delegated-arin-extended-latest')).toBeNull();
  });
});

describe('copyRefusal: rows against the minimum and the previous copy', () => {
  const feed: CatalogFeed = { type: 'cidr-list', options: { category: 'content' }, path: 'x', url: 'https://x', publisher: 'p', licence: 'l', minRows: 10, maxShrink: 0.5, cadenceMs: null };
  const copy = (rows: number, skipped = 0): CopySummary => ({ sha256: 's', rows, skipped, v4: { ranges: rows, units: rows, widest: 32 }, v6: noCoverage() });

  test('accepts a copy at the limits and refuses one just past them', () => {
    expect(copyRefusal(feed, copy(10), null)).toBeNull();
    expect(copyRefusal(feed, copy(9), null)).toBe('9 rows, fewer than the minimum 10');
    expect(copyRefusal(feed, copy(50), copy(100))).toBeNull();
    expect(copyRefusal(feed, copy(49), copy(100))).toMatch(/^shrank from 100 to 49 rows \(51% lost/);
    expect(copyRefusal(feed, copy(500), copy(100))).toBeNull();
  });

  test('refuses a copy with more malformed lines than rows', () => {
    expect(copyRefusal(feed, copy(20, 21), null)).toBe('21 malformed lines against 20 rows');
    expect(copyRefusal(feed, copy(20, 20), null)).toBeNull();
  });
});
