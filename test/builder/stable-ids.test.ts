/**
 * Stable ids across builds: a build given the previous index keeps the ids
 * of every string, sub-table row and record equal to one of it, answers
 * exactly as a build without it, and changes far fewer bytes of the file.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import type { ResolvedSource } from '../../index-builder/manifest.ts';
import { Section } from '../../src/index/format.ts';
import type { IndexRecord } from '../../src/index/record.ts';
import { IndexReader } from '../../src/index/reader.ts';
import type { Family } from '../../src/net/ip.ts';
import type { TextSource } from '../helpers/small-build.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-stable-ids-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const geoLines = (n: number) =>
  Array.from({ length: n }, (_, i) => `81.${2 + (i >> 8)}.${i & 255}.0,81.${2 + (i >> 8)}.${i & 255}.255,GB,England,,City${i % 97},EC${i % 13},51.${i % 10},-0.${i % 7},Europe/London`);
const asnLines = (n: number) => Array.from({ length: n }, (_, i) => `81.${2 + (i >> 8)}.${i & 255}.0,81.${2 + (i >> 8)}.${i & 255}.127,${64500 + (i % 50)},Org ${i % 50}`);
const GEO: TextSource = { type: 'geo-csv', name: 'geo.csv', text: geoLines(600).join('\n') + '\n' };
const ASN: TextSource = { type: 'asn-csv', name: 'asn.csv', text: asnLines(600).join('\n') + '\n' };
const VPN: TextSource = { type: 'cidr-list', name: 'vpn.txt', text: '5.10.0.0/24\n2a02:8000::/48\n', options: { category: 'vpn', provider: 'ExampleVPN' } };
const torIps = Array.from({ length: 40 }, (_, i) => `81.${2 + (i % 2)}.${(i * 7) & 255}.${1 + i}`);
const tor = (ips: string[]): TextSource => ({ type: 'tor-exits', name: 'tor.txt', text: `${ips.join('\n')}\n` });
const geofeed = (line: string): TextSource => ({ type: 'geofeed', name: 'geofeed.csv', text: `# prefix,country,region,city,postal\n${line}\n` });

const crawler = (key: string, cidr: string): TextSource => ({ type: 'crawler-ranges', name: `${key}.txt`, text: `${cidr}\n`, options: { crawler: key } });
const CRAWLERS = [crawler('alphabot', '81.4.10.0/24'), crawler('betabot', '81.4.20.0/24')];

/** v1; v2 edits it: a Tor exit gone, two added (new records), a /24 moved to another place, the crawler lists in the other order. */
const V1 = [GEO, ASN, VPN, ...CRAWLERS, geofeed('81.2.69.0/24,DE,,Berlin,'), tor(torIps)];
const V2 = [GEO, ASN, VPN, ...CRAWLERS.toReversed(), geofeed('81.2.69.0/24,FR,,Paris,'), tor([...torIps.slice(1), '81.3.200.9', '81.3.201.9'])];

/** Writes the sources into `at` and builds `out` there, with `previous` as the previous index. */
async function build(at: string, out: string, sources: readonly TextSource[], previous?: string, log?: (line: string) => void): Promise<string> {
  mkdirSync(at, { recursive: true });
  const resolved: ResolvedSource[] = sources.map((s) => {
    const absPath = join(at, s.name);
    writeFileSync(absPath, s.text);
    return { options: { ...s.options, type: s.type, path: absPath }, absPath, displayPath: s.name };
  });
  const path = join(at, out);
  await buildIndex({ sources: resolved, out: path, quiet: true, builtAtMs: Date.parse('2026-11-18T12:00:00Z'), previous, log });
  return path;
}

/** Every answer of an index: per interval of both families, its bounds and decoded record. */
function answers(path: string): string[] {
  const r = IndexReader.open(path);
  const out: string[] = [];
  for (const family of [4, 6] as Family[]) {
    const { recordIds } = r.intervals(family);
    for (let i = 0; i < recordIds.length; i++) out.push(JSON.stringify([r.intervalText(family, i), plain(r.record(recordIds[i]))]));
  }
  return out;
}

const plain = (rec: IndexRecord) => ({
  flags: rec.flags,
  geo: rec.geo,
  asn: rec.asn,
  allocation: rec.allocation,
  route: rec.route,
  provider: rec.provider,
  crawler: rec.crawler,
  specialUse: rec.specialUse,
  threatList: rec.threatList,
  threatFeed: rec.threatFeed,
  networkType: rec.networkType,
});

/** Bytes that differ between two files (the shorter one's length compared, the rest counted as differing). */
function differingBytes(a: string, b: string): number {
  const x = readFileSync(a);
  const y = readFileSync(b);
  let n = Math.abs(x.length - y.length);
  const common = Math.min(x.length, y.length);
  // Equal blocks skipped whole: the files hold a 64 MiB direct table, mostly equal.
  for (let at = 0; at < common; at += 4096) {
    const end = Math.min(common, at + 4096);
    if (x.subarray(at, end).equals(y.subarray(at, end))) continue;
    for (let i = at; i < end; i++) if (x[i] !== y[i]) n++;
  }
  return n;
}

let v1 = '';
let v2 = '';
let v2Fresh = '';
const logged: string[] = [];
beforeAll(async () => {
  v1 = await build(join(dir, 'v1'), 'v1.idx', V1);
  v2 = await build(join(dir, 'v2'), 'v2.idx', V2, v1, (l) => logged.push(l));
  v2Fresh = await build(join(dir, 'v2-fresh'), 'v2.idx', V2);
}, 120_000);

test('a build following the previous index answers exactly as one numbered afresh, for every interval', () => {
  expect(logged).toEqual([]);
  // The intervals that waited on disk for the record ids left no file behind.
  expect(readdirSync(join(dir, 'v2')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  const hinted = answers(v2);
  expect(hinted.length).toBeGreaterThan(1000);
  expect(hinted).toEqual(answers(v2Fresh));
});

test('unchanged ranges keep their record ids; the file changes in far fewer bytes than a fresh numbering', () => {
  const a = IndexReader.open(v1);
  const b = IndexReader.open(v2);
  const fresh = IndexReader.open(v2Fresh);
  // The Tor edit at 81.2.0.1 moved its interval; 81.4.* (untouched by every edit) and IPv6 keep theirs.
  let kept = 0;
  let moved = 0;
  for (let third = 0; third < 88; third++) {
    const ip = `81.4.${third}.200`;
    expect(b.recordIdOf(ip)).toBe(a.recordIdOf(ip));
    kept++;
    if (fresh.recordIdOf(ip) !== a.recordIdOf(ip)) moved++;
  }
  expect(b.recordIdOf('2a02:8000::1')).toBe(a.recordIdOf('2a02:8000::1'));
  expect([b.lookup('81.4.10.1')!.record.crawler, b.lookup('81.4.20.1')!.record.crawler]).toEqual(['alphabot', 'betabot']);
  expect(kept).toBe(88);
  // Without the previous index the new Tor record early in the sweep shifts later ids.
  expect(moved).toBeGreaterThan(0);
  const stable = differingBytes(v1, v2);
  const shifted = differingBytes(v1, v2Fresh);
  expect(stable * 4).toBeLessThan(shifted);
  expect(b.meta.deadIds?.previousBuiltAt).toBe(a.meta.builtAt);
}, 30_000);

test('IPv4 buckets stay where they were: the direct table changes only at the /24s the edit touched', () => {
  const words = (path: string, tag: string) => {
    const b = IndexReader.open(path).file.sections.get(tag)!.bytes;
    return new Uint32Array(b.buffer, b.byteOffset, b.byteLength / 4);
  };
  const changed = (x: Uint32Array, y: Uint32Array) => x.reduce((n, v, k) => n + (v !== y[k] ? 1 : 0), 0);
  // Tor: one exit gone, two added; the geofeed's /24 moved (its record changed, not its bucket).
  expect(changed(words(v1, Section.V4_DIRECT), words(v2, Section.V4_DIRECT))).toBeLessThanOrEqual(4);
  expect(changed(words(v1, Section.V4_DIRECT), words(v2Fresh, Section.V4_DIRECT))).toBeGreaterThan(100);
});

test('strings keep their offsets: the previous string table is a prefix of the new one', () => {
  const before = IndexReader.open(v1).file.sections.get(Section.STRING_BYTES)!.bytes;
  const after = IndexReader.open(v2).file.sections.get(Section.STRING_BYTES)!.bytes;
  expect(Buffer.from(after.subarray(0, before.length)).equals(Buffer.from(before))).toBe(true);
  // Berlin vanished with the move; it stays as a dead string.
  expect(IndexReader.open(v2).meta.deadIds!.strings).toBeGreaterThan(0);
});

test('a corrupt, foreign or missing previous file is ignored with one log line, the build still correct', async () => {
  const corrupt = join(dir, 'corrupt.idx');
  copyFileSync(v1, corrupt);
  const bytes = readFileSync(corrupt);
  bytes[bytes.length - 100] ^= 0xff;
  writeFileSync(corrupt, bytes);
  const foreign = join(dir, 'foreign.idx');
  writeFileSync(foreign, 'not an index at all\n');
  for (const prev of [corrupt, foreign, join(dir, 'missing.idx')]) {
    const lines: string[] = [];
    const out = await build(join(dir, 'bad'), 'bad.idx', V2, prev, (l) => lines.push(l));
    expect(lines.length).toBe(1);
    expect(lines[0]).toContain(`previous index ${prev} not used`);
    expect(answers(out)).toEqual(answers(v2Fresh));
    expect(IndexReader.open(out).meta.deadIds).toBeUndefined();
  }
}, 60_000);

test('a chain of builds keeps answering as fresh builds do (a previous file that itself followed one)', async () => {
  const v3 = await build(join(dir, 'v3'), 'v3.idx', V1, v2);
  const v3Fresh = await build(join(dir, 'v3-fresh'), 'v3.idx', V1);
  expect(answers(v3)).toEqual(answers(v3Fresh));
  // Back to v1's feeds: the record ids of v1 come back for every interval.
  const a = IndexReader.open(v1);
  const c = IndexReader.open(v3);
  expect(Array.from(c.intervals(4).recordIds)).toEqual(Array.from(a.intervals(4).recordIds));
}, 60_000);

test('build-index follows the --out file it replaces by default; --no-previous numbers afresh', async () => {
  const { main } = await import('../../index-builder/build-command.ts');
  const at = join(dir, 'cli');
  mkdirSync(at, { recursive: true });
  const sources = V2.map((s) => {
    writeFileSync(join(at, s.name), s.text);
    return { type: s.type, path: s.name, ...s.options };
  });
  writeFileSync(join(at, 'feeds.json'), JSON.stringify({ sources }));
  const out = join(at, 'out.idx');
  copyFileSync(v1, out);
  const args = ['--manifest', join(at, 'feeds.json'), '--no-defaults', '--out', out, '--quiet'];
  expect(await main(args)).toBe(0);
  expect(IndexReader.open(out).meta.deadIds?.previousBuiltAt).toBe(IndexReader.open(v1).meta.builtAt);
  expect(await main([...args, '--no-previous'])).toBe(0);
  expect(IndexReader.open(out).meta.deadIds).toBeUndefined();
  expect(await main([...args, '--no-previous', '--previous', v1])).toBe(2);
}, 60_000);

test('a previous file carrying more than the allowed share of dead ids is not followed: the build compacts', async () => {
  const SMALL = [{ ...GEO, text: geoLines(100).join('\n') + '\n' }, ASN, VPN, tor(torIps)];
  const shrunk = await build(join(dir, 'shrunk'), 'shrunk.idx', SMALL, v1);
  const dead = IndexReader.open(shrunk).meta.deadIds!;
  expect(dead.records).toBeGreaterThan(0.2 * IndexReader.open(shrunk).meta.counts.records);
  const lines: string[] = [];
  const next = await build(join(dir, 'compacted'), 'compacted.idx', SMALL, shrunk, (l) => lines.push(l));
  expect(lines).toEqual([expect.stringContaining('records are dead (more than 20 %): compacting')]);
  expect(IndexReader.open(next).meta.deadIds).toBeUndefined();
  expect(IndexReader.open(next).meta.counts.records).toBeLessThan(IndexReader.open(shrunk).meta.counts.records);
  expect(answers(next)).toEqual(answers(shrunk));
}, 60_000);
