/**
 * The MMDB export read back by independent readers: mmdb-lib for 100 000
 * random IPv4 and IPv6 addresses and every interval boundary of a small real
 * build, libmaxminddb's mmdblookup on a sample, and the metadata's types
 * checked byte by byte against the format spec.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { Reader } from 'mmdb-lib';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import type { ResolvedSource } from '../../index-builder/manifest.ts';
import { MmdbUint, type MmdbInput } from '../../index-builder/mmdb/encoder.ts';
import { exportMmdb, MMDB_DATABASE_TYPE } from '../../src/commands/export/mmdb.ts';
import { mmdbRecord } from '../../src/commands/export/geoip-record.ts';
import { IndexReader } from '../../src/index/reader.ts';
import type { V1Context } from '../../src/lookup/v1.ts';
import { formatIPv4 } from '../../src/net/ip.ts';
import { coverageOf } from '../../src/scoring/coverage.ts';
import { DEFAULT_POLICY } from '../../src/scoring/index.ts';
import { prng } from '../helpers/prng.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-mmdb-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const NOW = Date.parse('2026-11-20T00:00:00Z');

function written(type: string, name: string, text: string): ResolvedSource {
  const absPath = join(dir, name);
  writeFileSync(absPath, text);
  return { options: { type, path: absPath }, absPath, displayPath: name };
}
const real = (type: string, path: string, extra: Record<string, string> = {}): ResolvedSource => ({ options: { type, path, ...extra }, absPath: resolve(FIXTURE_FEEDS_DIR, path), displayPath: path });

const GEO = [
  '81.2.69.0,81.2.69.255,GB,England,,London,EC1A,51.5142,-0.0931,Europe/London',
  '81.2.70.0,81.2.70.127,DE,Bavaria,,Munich,80331,48.1374,11.5755,Europe/Berlin',
  '203.0.113.0,203.0.113.255,AU,,,,,,,',
  '2a02:8000::,2a02:80ff:ffff:ffff:ffff:ffff:ffff:ffff,FR,Ile-de-France,,Paris,75001,48.8566,2.3522,Europe/Paris',
  '2600:1f00::,2600:1fff:ffff:ffff:ffff:ffff:ffff:ffff,US,Virginia,,Ashburn,20147,39.0438,-77.4874,America/New_York',
];
const ASN = ['81.2.0.0,81.2.127.255,20712,Andrews & Arnold Ltd', '3.0.0.0,3.255.255.255,16509,"Amazon.com, Inc."', '2a02:8000::,2a02:8fff:ffff:ffff:ffff:ffff:ffff:ffff,3215,Orange'];

let reader: IndexReader;
let mmdbPath: string;
let mmdb: Reader<Record<string, unknown>>;
let ctx: V1Context;
beforeAll(async () => {
  const out = join(dir, 'small.idx');
  await buildIndex({
    quiet: true,
    out,
    builtAtMs: Date.parse('2026-11-18T12:00:00Z'),
    sources: [
      written('geo-csv', 'geo.csv', GEO.join('\n') + '\n'),
      written('asn-csv', 'asn.csv', ASN.join('\n') + '\n'),
      real('tor-exits', 'tor/exit-addresses'),
      real('cloud-aws', 'cloud/aws-ip-ranges.json'),
      real('cidr-list', 'vpn/x4bnet-input-mullvadvpn-ips.txt', { category: 'vpn', provider: 'Mullvad' }),
      real('crawler-ranges', 'crawlers/googlebot.json', { crawler: 'googlebot' }),
    ],
  });
  reader = IndexReader.open(out);
  mmdbPath = join(dir, 'small.mmdb');
  writeFileSync(mmdbPath, 'an older export'); // replaced atomically
  exportMmdb(reader, mmdbPath, NOW);
  mmdb = new Reader(readFileSync(mmdbPath));
  ctx = { scoring: { verifiedCrawler: null, coverage: coverageOf(reader.meta, NOW) }, policy: DEFAULT_POLICY, rdapOwner: null, now: NOW };
}, 120_000);

/** A writer value as a reader gives it back (unsigned integers as numbers). */
function plain(v: MmdbInput | null): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof MmdbUint) return Number(v.value);
  if (Array.isArray(v)) return v.map(plain);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
}

/** What the index says the database must hold for an address. */
const expected = (ip: string) => plain(mmdbRecord(reader.lookup(ip)!.record, ctx));

/** Canonical text of four words. */
const v6Text = (w: ArrayLike<number>) => {
  const g: string[] = [];
  for (let k = 0; k < 4; k++) g.push((w[k] >>> 16).toString(16), (w[k] & 0xffff).toString(16));
  return g.join(':');
};

test('mmdb-lib reads back what the index holds for 100 000 random addresses and every interval boundary', () => {
  const rnd = prng(2121);
  const ips: string[] = [];
  const v4 = reader.intervals(4);
  const v6 = reader.intervals(6);
  // Interval boundaries: each start and the address before it (the previous interval's end).
  for (let i = 0; i < v4.starts.length; i++) {
    ips.push(formatIPv4(v4.starts[i]));
    if (v4.starts[i] > 0) ips.push(formatIPv4(v4.starts[i] - 1));
  }
  for (let i = 0; i < v6.recordIds.length; i++) {
    const w = Array.from(v6.starts.subarray(4 * i, 4 * i + 4));
    ips.push(v6Text(w));
    for (let k = 3; k >= 0; k--) {
      if (w[k] > 0) {
        w[k]--;
        ips.push(v6Text(w));
        break;
      }
      w[k] = 0xffffffff;
    }
  }
  const word = () => Math.floor(rnd() * 2 ** 32);
  for (let i = 0; i < 50_000; i++) ips.push(formatIPv4(word()));
  for (let i = 0; i < 50_000; i++) {
    // Half anywhere, half inside a random interval's first /64s (where the data is).
    const k = Math.floor(rnd() * v6.recordIds.length);
    const w = i % 2 ? [word(), word(), word(), word()] : [v6.starts[4 * k], v6.starts[4 * k + 1], word(), word()];
    ips.push(v6Text(w));
  }
  let withData = 0;
  for (const ip of ips) {
    // ::/96 is the IPv4 space in every MMDB; the index answers :: and ::1 as IPv6 (docs/deployment.md).
    if (ip === '0:0:0:0:0:0:0:0' || ip === '0:0:0:0:0:0:0:1') continue;
    const want = expected(ip);
    const got = mmdb.get(ip);
    if (want !== null) withData++;
    if (JSON.stringify(got) !== JSON.stringify(want)) expect({ ip, got } as unknown).toEqual({ ip, got: want });
  }
  expect(ips.length).toBeGreaterThan(100_000);
  expect(withData).toBeGreaterThan(20_000);
}, 120_000);

test('GeoIP2 field names carry the index facts', () => {
  const london = mmdb.get('81.2.69.160') as any;
  expect(london.country).toEqual({ iso_code: 'GB', names: { en: 'United Kingdom' } });
  expect(london.city).toEqual({ names: { en: 'London' } });
  expect(london.subdivisions).toEqual([{ names: { en: 'England' } }]);
  expect(london.postal).toEqual({ code: 'EC1A' });
  expect(london.location).toEqual({ latitude: 51.5142, longitude: -0.0931, time_zone: 'Europe/London' });
  expect(london.autonomous_system_number).toBe(20712);
  expect(london.autonomous_system_organization).toBe('Andrews & Arnold Ltd');
  // Absence is not evidence: no anonymity key where no list names the address.
  expect(Object.keys(london).filter((k) => k.startsWith('is_'))).toEqual([]);
  // The API says usage_type "unknown" here; the database leaves the key out, as MaxMind does.
  expect(london.classification).toBeDefined();
  expect('usage_type' in london.classification).toBe(false);
  const paris = mmdb.get('2a02:8000::1') as any;
  expect(paris.city.names.en).toBe('Paris');
  expect(paris.autonomous_system_number).toBe(3215);
  const aws = mmdb.get('3.5.140.1') as any;
  expect(aws.is_hosting_provider).toBe(true);
  expect(aws.classification.usage_type).toBe('hosting');
  expect(aws.network.operator).toBe(reader.lookup('3.5.140.1')!.record.provider?.name);
  const tor = readFileSync(resolve(FIXTURE_FEEDS_DIR, 'tor/exit-addresses'), 'utf8').match(/ExitAddress (\S+)/)![1];
  expect((mmdb.get(tor) as any).is_tor_exit_node).toBe(true);
  expect((mmdb.get(tor) as any).is_anonymous).toBe(true);
  expect((mmdb.get(`::ffff:${tor}`) as any).is_tor_exit_node).toBe(true);
  // 203.0.113.0/24 is documentation space: the special-use record is there, the AU row too.
  expect((mmdb.get('203.0.113.7') as any).country.iso_code).toBe('AU');
});

// Debian's mmdb-bin (.ci/run installs it); without it this test says it is skipped, except under CI.
const runMmdblookup = Bun.which('mmdblookup') !== null || !!process.env.CI;
if (!runMmdblookup) console.warn('skipped: mmdblookup (Debian mmdb-bin) is not installed; CI=true makes this a failure');
test.skipIf(!runMmdblookup)("libmaxminddb's mmdblookup reads the same values on a sample", () => {
  expect(Bun.which('mmdblookup')).not.toBeNull(); // Debian mmdb-bin (.ci/run installs it)
  const look = (ip: string, ...path: string[]) => {
    const r = Bun.spawnSync(['mmdblookup', '--file', mmdbPath, '--ip', ip, ...path]);
    expect(r.exitCode).toBe(0);
    return r.stdout.toString().trim();
  };
  expect(look('81.2.69.160', 'city', 'names', 'en')).toBe('"London" <utf8_string>');
  expect(look('81.2.69.160', 'location', 'latitude')).toBe('51.514200 <double>');
  expect(look('81.2.69.160', 'autonomous_system_number')).toBe('20712 <uint32>');
  expect(look('2a02:8000::1', 'country', 'iso_code')).toBe('"FR" <utf8_string>');
  const rnd = prng(7);
  for (let i = 0; i < 25; i++) {
    const ip = formatIPv4(Math.floor(rnd() * 2 ** 32));
    const want = expected(ip) as Record<string, any> | null;
    const out = look(ip);
    if (want === null) expect(out).toContain('Could not find an entry');
    else expect(out).toContain(`"${want.network?.routability?.status ?? want.routing.rpki_status}" <utf8_string>`);
  }
  const verbose = Bun.spawnSync(['mmdblookup', '--verbose', '--file', mmdbPath, '--ip', '1.1.1.1']).stdout.toString();
  expect(verbose).toContain(`Type:          ${MMDB_DATABASE_TYPE}`);
  expect(verbose).toContain('Binary format: 2.0');
});

/** The metadata map's keys with their MMDB type numbers, read from the bytes (no decoder of ours involved). */
function metadataTypes(buf: Uint8Array): Record<string, { type: number; value: unknown }> {
  const marker = Buffer.from([0xab, 0xcd, 0xef, ...Buffer.from('MaxMind.com')]);
  let p = Buffer.from(buf).lastIndexOf(marker) + marker.length;
  const head = () => {
    const c = buf[p++];
    let type = c >> 5;
    if (type === 0) type = 7 + buf[p++];
    let size = c & 31;
    if (size === 29) size = 29 + buf[p++];
    else if (size === 30) (size = 285 + buf[p] * 256 + buf[p + 1]), (p += 2);
    return { type, size };
  };
  const value = (): unknown => {
    const { type, size } = head();
    const start = p;
    if (type === 2) return (p += size), Buffer.from(buf.subarray(start, p)).toString('utf8');
    if ([5, 6, 9].includes(type)) return (p += size), buf.subarray(start, p).reduce((n, b) => n * 256 + b, 0);
    if (type === 11) return Array.from({ length: size }, value);
    if (type === 7) return Object.fromEntries(Array.from({ length: size }, () => [value(), value()]));
    throw new Error(`unexpected type ${type} in metadata`);
  };
  const { type, size } = head();
  expect(type).toBe(7);
  const out: Record<string, { type: number; value: unknown }> = {};
  for (let i = 0; i < size; i++) {
    const key = value() as string;
    const at = p;
    const t = head().type;
    p = at;
    out[key] = { type: t, value: value() };
  }
  return out;
}

test('the metadata has every key of spec 2.0 with its type, and the layout it describes', () => {
  const buf = readFileSync(mmdbPath);
  const m = metadataTypes(buf);
  const UINT16 = 5, UINT32 = 6, UINT64 = 9, UTF8 = 2, MAP = 7, ARRAY = 11;
  expect(Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v.type]))).toEqual({
    binary_format_major_version: UINT16,
    binary_format_minor_version: UINT16,
    build_epoch: UINT64,
    database_type: UTF8,
    description: MAP,
    ip_version: UINT16,
    languages: ARRAY,
    node_count: UINT32,
    record_size: UINT16,
  });
  expect(m.binary_format_major_version.value).toBe(2);
  expect(m.ip_version.value).toBe(6);
  expect(m.build_epoch.value).toBe(Date.parse('2026-11-18T12:00:00Z') / 1000);
  expect(m.languages.value).toEqual(['en']);
  expect((m.description.value as Record<string, string>).en).toContain('GeoIP2-City');
  const recordSize = m.record_size.value as number;
  expect([24, 28, 32]).toContain(recordSize);
  // The 16-byte zero separator sits right after node_count nodes.
  const treeSize = ((m.node_count.value as number) * recordSize * 2) / 8;
  expect([...buf.subarray(treeSize, treeSize + 16)]).toEqual(new Array(16).fill(0));
});

test('the export replaced the older file atomically and left no temp file', () => {
  expect(readFileSync(mmdbPath).subarray(0, 15).toString()).not.toBe('an older export');
  expect(readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([]);
  expect(existsSync(mmdbPath)).toBe(true);
});

test('build-index --mmdb writes both files; ipintel export --mmdb writes one from an index; --help lists the flag', async () => {
  const root = resolve(import.meta.dir, '../..');
  const run = async (args: string[]) => {
    const p = Bun.spawn(['bun', ...args], { cwd: root, stdout: 'pipe', stderr: 'pipe' });
    const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
    return { code: await p.exited, out, err };
  };
  const manifest = join(dir, 'cli.json');
  writeFileSync(manifest, JSON.stringify({ sources: [{ type: 'geo-csv', path: join(dir, 'geo.csv') }, { type: 'tor-exits', path: resolve(FIXTURE_FEEDS_DIR, 'tor/exit-addresses') }] }));
  const idx = join(dir, 'cli.idx');
  const built = join(dir, 'cli-built.mmdb');
  // `bun run build-index` runs src/commands/build-index.ts (package.json), which hands the export to the builder.
  const r = await run(['src/cli.ts', 'build-index', '--manifest', manifest, '--out', idx, '--no-defaults', '--mmdb', built, '--quiet']);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  const fromBuild = new Reader(readFileSync(built));
  expect((fromBuild.get('81.2.69.160') as any).city.names.en).toBe('London');
  const exported = join(dir, 'cli-exported.mmdb');
  const e = await run(['src/cli.ts', 'export', '--index', idx, '--mmdb', exported]);
  expect(e.code).toBe(0);
  expect(e.out.trim()).toBe(exported);
  expect((new Reader(readFileSync(exported)).get('81.2.70.1') as any).country.iso_code).toBe('DE');
  expect((await run(['src/cli.ts', 'export'])).code).toBe(2);
  expect((await run(['src/cli.ts', 'export', '--index', join(dir, 'missing.idx'), '--mmdb', exported])).code).toBe(1);
  expect((await run(['index-builder/build-command.ts', '--help'])).out).toContain('--mmdb <file>');
  // The builder alone cannot export (it sits below the v1 builder the export answers with): it says where to run it.
  const alone = await run(['index-builder/build-command.ts', '--manifest', manifest, '--out', idx, '--no-defaults', '--mmdb', built, '--quiet']);
  expect(alone.code).toBe(2);
  expect(alone.err).toContain('bun run build-index');
}, 90_000);
