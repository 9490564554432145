/**
 * The index files a soak (or a reliability test) swaps between: two small,
 * distinct builds from real feed snapshots, and the operator's atomic swap
 * (copy to a temp name beside the live path, fsync, rename).
 */
import { closeSync, copyFileSync, fsyncSync, openSync, renameSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import type { ResolvedSource } from '../../index-builder/manifest.ts';
import { mapIndexFile } from '../../src/index/map-index-file.ts';

/** The shared feed snapshots (../shared/feeds beside the repository). */
export const DEFAULT_FEEDS_DIR = resolve(import.meta.dir, '../../../shared/feeds');

/** Small but real: crawler ranges (verify), a cloud, Tor, DROP, a VPN list, bogons, ASN names. */
const BASE_SOURCES: Array<Record<string, string>> = [
  { type: 'asn-info', path: 'asn/asn2org-asns.csv.gz' },
  { type: 'crawler-ranges', crawler: 'googlebot', path: 'crawlers/googlebot.json' },
  { type: 'crawler-ranges', crawler: 'bingbot', path: 'crawlers/bingbot.json' },
  { type: 'cloud-aws', path: 'cloud/aws-ip-ranges.json' },
  { type: 'spamhaus-drop', path: 'threat/spamhaus-drop_v4.json' },
  { type: 'cidr-list', category: 'vpn', provider: 'Mullvad', path: 'vpn/x4bnet-input-mullvadvpn-ips.txt' },
  { type: 'bogons', path: 'bogons/fullbogons-ipv4.txt' },
];

/** Only in index A, so the two files differ in content as well as build time. */
const ONLY_IN_A: Array<Record<string, string>> = [{ type: 'tor-exits', path: 'tor/exit-addresses' }];

/** Build times of the two files (fixed, so a reload's answer names which one is live). */
export const SOAK_BUILT_AT = { a: Date.parse('2026-11-01T00:00:00Z'), b: Date.parse('2026-11-02T00:00:00Z') };

function resolved(feedsDir: string, list: Array<Record<string, string>>): ResolvedSource[] {
  return list.map((o) => ({ options: { ...o, type: o.type, path: o.path }, absPath: resolve(feedsDir, o.path), displayPath: o.path }));
}

/** Builds index A (with Tor exits) and B (without) into `dir`; returns their paths. */
export async function buildSoakIndexes(dir: string, feedsDir = DEFAULT_FEEDS_DIR): Promise<{ a: string; b: string }> {
  const a = join(dir, 'soak-a.idx');
  const b = join(dir, 'soak-b.idx');
  await buildIndex({ sources: resolved(feedsDir, [...BASE_SOURCES, ...ONLY_IN_A]), out: a, quiet: true, builtAtMs: SOAK_BUILT_AT.a });
  await buildIndex({ sources: resolved(feedsDir, BASE_SOURCES), out: b, quiet: true, builtAtMs: SOAK_BUILT_AT.b });
  return { a, b };
}

/** The `built_at` an index file reports (ISO 8601), read from its verified header. */
export function builtAtOf(path: string): string {
  return mapIndexFile(path, { verifyChecksums: false }).meta.builtAt;
}

/** Puts a copy of `source` at `live` the way an operator should: temp name in the same folder, fsync, rename. */
export function swapIndexFile(source: string, live: string): void {
  const tmp = join(dirname(live), `.${basename(live)}.swap-${process.pid}`);
  copyFileSync(source, tmp);
  const fd = openSync(tmp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, live);
}
