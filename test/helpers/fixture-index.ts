/**
 * A small real index for HTTP tests: a handful of real feed snapshots from
 * ../shared/feeds (crawler ranges, Tor exits, DROP, AWS, relay, bogons, a
 * RIR file, routes) plus a few synthetic location and ASN ranges, built once
 * per test process into a temp folder.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import type { ResolvedSource } from '../../index-builder/manifest.ts';
import { FEEDS_DIR } from './recording-sink.ts';

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

let built: Promise<string> | null = null;

/** Every source file of the builder, so a change to the builder rebuilds the fixture. */
export function builderFingerprint(): string {
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
  walk(join(root, 'src/index'));
  walk(join(root, 'src/net'));
  return hasher.digest('hex').slice(0, 16);
}

/**
 * Path of the fixture index: built on first use and kept in the temp folder
 * under a fingerprint of the builder, so test files and runs share one build.
 */
export function fixtureIndexPath(): Promise<string> {
  built ??= (async () => {
    const out = join(tmpdir(), `ipintel-fixture-${builderFingerprint()}.idx`);
    if (existsSync(out)) return out;
    const sources: ResolvedSource[] = FIXTURE_SOURCES.map((o) => ({
      options: { ...o, type: o.type, path: o.path },
      absPath: resolve(FEEDS_DIR, o.path),
      displayPath: o.path,
    }));
    await buildIndex({ sources, out, quiet: true, builtAtMs: Date.parse('2026-11-01T00:00:00Z') });
    return out;
  })();
  return built;
}
