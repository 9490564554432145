/**
 * A small index for HTTP tests, from the feeds in test/fixtures/feeds
 * (trimmed samples of real crawler ranges, Tor exits, AWS, relay, bogons, a
 * RIR file, routes; generated Spamhaus lists: see its README.md), built once
 * per test process into a temp folder. It needs nothing outside the repository.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import type { ResolvedSource } from '../../index-builder/manifest.ts';

const FIXTURE_SOURCES: Array<Record<string, string>> = [
  { type: 'asn-info', path: 'asn/asn2org-asns.csv.gz' },
  { type: 'rir-delegated', path: 'rir/delegated-apnic-20260618.gz' },
  { type: 'pfx2as', path: 'routing/routeviews-rv2-20240406-1200.pfx2as.gz' },
  { type: 'crawler-ranges', crawler: 'googlebot', path: 'crawlers/googlebot.json' },
  { type: 'crawler-ranges', crawler: 'bingbot', path: 'crawlers/bingbot.json' },
  { type: 'crawler-ranges', crawler: 'gptbot', path: 'crawlers/gptbot.json' },
  { type: 'cloud-aws', path: 'cloud/aws-ip-ranges.json' },
  { type: 'cidr-list', category: 'vpn', provider: 'Mullvad', path: 'vpn/x4bnet-input-mullvadvpn-ips.txt' },
  { type: 'cidr-list', category: 'privacy_relay', provider: 'iCloud Private Relay', path: 'relay/derived-x4bnet-apple-private-relay-ips.txt' },
  { type: 'cidr-list', category: 'content', provider: 'Cloudflare', path: 'cloud/cloudflare-ips-v4.txt' },
  { type: 'tor-exits', path: 'tor/exit-addresses' },
  { type: 'spamhaus-drop', path: 'threat/spamhaus-drop_v4.json' },
  { type: 'spamhaus-asndrop', path: 'threat/spamhaus-asndrop.json' },
  { type: 'threat-feed', path: 'threat/feodotracker-ipblocklist.csv' },
  { type: 'bogons', path: 'bogons/fullbogons-ipv4.txt' },
  { type: 'geofeed', category: 'datacenter', provider: 'DigitalOcean', path: 'cloud/digitalocean-geofeed.csv' },
];

/** The fixture feeds, in their publishers' formats (written by tools/trim-fixture-feeds.ts). */
export const FIXTURE_FEEDS_DIR = resolve(import.meta.dir, '../fixtures/feeds');

const built = new Map<string, Promise<string>>();

/** Every source file of the builder, so a change to the builder rebuilds the fixture. */
export function builderFingerprint(feedsDir: string | null = FIXTURE_FEEDS_DIR): string {
  const hasher = new Bun.CryptoHasher('sha256');
  hasher.update(JSON.stringify(FIXTURE_SOURCES));
  const root = resolve(import.meta.dir, '../..');
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) hasher.update(readFileSync(p));
    }
  };
  walk(join(root, 'index-builder'));
  // The feeds' bytes too, unless the caller's build reads other files (full-index.ts).
  if (feedsDir !== null) for (const o of FIXTURE_SOURCES) hasher.update(readFileSync(join(feedsDir, o.path)));
  walk(join(root, 'src/index'));
  walk(join(root, 'src/net'));
  // The builder names crawler owners from the registry (index-builder/merge/precedence.ts).
  hasher.update(readFileSync(join(root, 'src/crawlers/registry.ts')));
  return hasher.digest('hex').slice(0, 16);
}

/**
 * Path of the fixture index: built on first use and kept in the temp folder
 * under a fingerprint of the builder and the feeds, so test files and runs
 * share one build. `feedsDir` holds the same files under the same names:
 * the benchmarks give the real snapshots, to measure on real-sized data.
 */
export function fixtureIndexPath(feedsDir = FIXTURE_FEEDS_DIR): Promise<string> {
  let path = built.get(feedsDir);
  if (path) return path;
  path = (async () => {
    const out = join(tmpdir(), `ipintel-fixture-${builderFingerprint(feedsDir)}.idx`);
    if (existsSync(out)) {
      // Marks it used, so another checkout's clean-up (below) keeps it.
      const t = Date.now() / 1000;
      utimesSync(out, t, t);
      return out;
    }
    const sources: ResolvedSource[] = FIXTURE_SOURCES.map((o) => ({
      options: { ...o, type: o.type, path: o.path },
      absPath: resolve(feedsDir, o.path),
      displayPath: o.path,
    }));
    await buildIndex({ sources, out, quiet: true, builtAtMs: Date.parse('2026-11-01T00:00:00Z') });
    removeStaleFixtures(tmpdir(), out, Date.now());
    return out;
  })();
  built.set(feedsDir, path);
  return path;
}

/** Fixtures of other builder versions unused for this long are removed (another checkout may still use a recent one). */
export const STALE_FIXTURE_MS = 24 * 60 * 60 * 1000;

/**
 * Removes fixture files of other fingerprints last used (modified: a reuse
 * touches the file) more than STALE_FIXTURE_MS before `now`: every builder
 * change leaves one (~190 MB).
 * Returns the names removed.
 */
export function removeStaleFixtures(dir: string, keep: string, now: number): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (!/^ipintel-fixture-[0-9a-f]{16}\.idx$/.test(name) || p === keep) continue;
    try {
      if (now - statSync(p).mtimeMs > STALE_FIXTURE_MS) {
        rmSync(p, { force: true });
        removed.push(name);
      }
    } catch {
      // Gone already (another process cleaned up): nothing to do.
    }
  }
  return removed;
}
