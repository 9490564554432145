/**
 * The feed catalog: it loads, its limits fit the real snapshots (each entry
 * with a snapshot parses with its real parser and meets minRows), it agrees
 * with the shared manifest, and bad entries are refused naming the entry.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatalogError, loadCatalog, sourceUrlOf, type CatalogFeed } from '../../src/feeds/catalog.ts';
import { countRows, refusal } from '../../src/feeds/validate.ts';
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

  testWithShared('every entry with a real snapshot parses with its parser and meets its minimum rows', async () => {
    const withSnapshot = catalog.filter((f) => existsSync(join(FEEDS_DIR, f.path)));
    expect(withSnapshot.length).toBeGreaterThan(35);
    for (const f of withSnapshot) {
      const { rows } = await countRows(f, join(FEEDS_DIR, f.path), f.path);
      expect({ path: f.path, ok: rows >= f.minRows }).toEqual({ path: f.path, ok: true });
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

describe('refusal', () => {
  const feed: CatalogFeed = { type: 'cidr-list', options: {}, path: 'x', url: 'https://x', publisher: 'p', licence: 'l', minRows: 10, maxShrink: 0.5, cadenceMs: null };

  test('accepts a copy at the limits and refuses one just past them', () => {
    expect(refusal(feed, { rows: 10, skipped: 0 }, null)).toBeNull();
    expect(refusal(feed, { rows: 9, skipped: 0 }, null)).toBe('9 rows, fewer than the minimum 10');
    expect(refusal(feed, { rows: 50, skipped: 0 }, { rows: 100, skipped: 0 })).toBeNull();
    expect(refusal(feed, { rows: 49, skipped: 0 }, { rows: 100, skipped: 0 })).toMatch(/^shrank from 100 to 49 rows \(51% lost/);
    expect(refusal(feed, { rows: 500, skipped: 0 }, { rows: 100, skipped: 0 })).toBeNull();
  });

  test('refuses a copy with more malformed lines than rows', () => {
    expect(refusal(feed, { rows: 20, skipped: 21 }, null)).toBe('21 malformed lines against 20 rows');
    expect(refusal(feed, { rows: 20, skipped: 20 }, null)).toBeNull();
  });
});
