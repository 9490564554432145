/**
 * Operator overrides (issue 31) over a small real build: a CSV file with
 * nested and overlapping IPv4 and IPv6 prefixes; the most specific wins;
 * what an override does not name comes from the index; `is_tor: true`
 * scores like the Tor feed; HTTP, `bun run lookup` and the MMDB export
 * agree on random addresses in and out of the overrides; an edited file is
 * picked up while serving; a bad line is reported by number; a garbled
 * file keeps the overrides in force.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import { Reader } from 'mmdb-lib';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { exportMmdb } from '../../src/commands/export/mmdb.ts';
import { OfflineLookup } from '../../src/commands/lookup/answer.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { parseOverridesText } from '../../src/contract/overrides.ts';
import { OverridesHolder } from '../../src/lookup/overrides/holder.ts';
import { OverrideTable } from '../../src/lookup/overrides/table.ts';
import { formatIPv4, formatIPv6 } from '../../src/net/ip.ts';
import type { RunningServer } from '../../src/host/start-server.ts';
import { call, NO_LIMITS } from '../http/support.ts';
import { buildFromTexts } from '../helpers/small-build.ts';
import { startTestServer } from '../helpers/test-server.ts';

const ADMIN = 'overrides-admin';
const dir = mkdtempSync(join(tmpdir(), 'ipintel-overrides-'));
const overridesPath = join(dir, 'overrides.csv');

const OVERRIDES = [
  'cidr,country_code,city,is_tor,is_vpn,org,risk,verdict,note',
  '81.2.0.0/16,NL,Amsterdam,,,Office Net,,,HQ block',
  // Nested in the /16: most specific wins, and it names no location (the index's London stays).
  '81.2.69.0/24,,,,true,,,,VPN egress',
  '81.2.69.77,,,false,,,,allow,our Tor test relay',
  '81.2.70.5,,,true,,,,,',
  '999.1.1.0/24,DE,,,,,,,this line is bad',
  '2a02:8000::/32,DE,,,,,20,,ipv6 block',
  '2a02:8000:1::/48,,,,,,,block,v6 nested',
].join('\n');

let indexPath: string;
let server: RunningServer;

const v1 = async (ip: string) => (await call(server.url, `/v1/ip/${ip}`)).json() as Record<string, any>;
const labels = (body: Record<string, any>) => (body.evidence.signals as Array<{ label: string }>).map((s) => s.label);

beforeAll(async () => {
  indexPath = await buildFromTexts(dir, 'small.idx', [
    {
      type: 'geo-csv',
      name: 'geo.csv',
      text: [
        '81.2.69.0,81.2.69.255,GB,England,,London,EC1A,51.5142,-0.0931,Europe/London',
        '81.2.70.0,81.2.70.255,GB,England,,London,EC1A,51.5142,-0.0931,Europe/London',
        '2a02:8000::,2a02:80ff:ffff:ffff:ffff:ffff:ffff:ffff,FR,Ile-de-France,,Paris,75001,48.8566,2.3522,Europe/Paris',
      ].join('\n'),
    },
    { type: 'asn-csv', name: 'asn.csv', text: '81.2.0.0,81.2.127.255,20712,Andrews & Arnold Ltd\n2a02:8000::,2a02:8fff:ffff:ffff:ffff:ffff:ffff:ffff,3215,Orange\n' },
    { type: 'tor-exits', name: 'tor.txt', text: '81.2.69.77\n81.2.70.9\n' },
    { type: 'cidr-list', name: 'vpn.txt', text: '81.2.71.0/24\n', options: { category: 'vpn', provider: 'Mullvad' } },
  ]);
  writeFileSync(overridesPath, OVERRIDES);
  server = await startTestServer({ ...NO_LIMITS, IPINTEL_INDEX: indexPath, IPINTEL_OVERRIDES: overridesPath, IPINTEL_ADMIN_TOKEN: ADMIN });
}, 120_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('what an override answers', () => {
  test('the /16 names country, city and org; the ASN and the rest still come from the index', async () => {
    const b = await v1('81.2.1.1');
    expect(b.location.country_code).toBe('NL');
    expect(b.location.city).toBe('Amsterdam');
    expect(b.network.org).toBe('Office Net');
    expect(b.network.asn).toBe('AS20712');
    const override = b.evidence.signals.find((s: { label: string }) => s.label === 'operator_override');
    expect(override.description).toBe('HQ block (operator override 81.2.0.0/16)');
    expect(b.explanation.summary).toContain('An operator override applies to 81.2.0.0/16 (HQ block).');
  });

  test('the most specific override wins: the nested /24 names no location, so the index answers London', async () => {
    const b = await v1('81.2.69.10');
    expect(b.location.country_code).toBe('GB');
    expect(b.location.city).toBe('London');
    expect(b.network.org).toBe('Andrews & Arnold Ltd');
    expect(b.classification.is_vpn).toBe(true);
    expect(labels(b)).toContain('vpn_range');
    expect(labels(b)).toContain('operator_override');
  });

  test('is_tor: false clears a Tor exit of the feed; a fixed verdict sets the band', async () => {
    const b = await v1('81.2.69.77');
    expect(b.classification.is_tor).toBe(false);
    expect(labels(b)).not.toContain('tor_exit');
    // The /32 wins over the /24: its is_vpn is not inherited.
    expect(b.classification.is_vpn).toBe(false);
    expect(b.score.verdict).toBe('allow');
    expect(b.score.risk_score).toBeLessThan(20);
  });

  test('is_tor: true scores exactly like the Tor feed on the same facts', async () => {
    const byOverride = await v1('81.2.70.5');
    const byFeed = await v1('81.2.70.9');
    expect(byOverride.classification.is_tor).toBe(true);
    expect(byFeed.classification.is_tor).toBe(true);
    expect(byOverride.classification.usage_type).toBe('tor');
    expect(labels(byOverride).filter((l) => l !== 'operator_override')).toEqual(labels(byFeed).filter((l) => l !== 'operator_override'));
    expect(byOverride.score).toEqual(byFeed.score);
    expect(byOverride.classification.threat_level).toBe(byFeed.classification.threat_level);
  });

  test('IPv6: a risk adjustment on the /32, a fixed verdict on the nested /48', async () => {
    const outer = await v1('2a02:8000:2::1');
    expect(outer.location.country_code).toBe('DE');
    expect(outer.location.city).toBe('Paris');
    const plain = await v1('2a02:8001::1');
    expect(plain.location.country_code).toBe('FR');
    expect(labels(plain)).not.toContain('operator_override');
    expect(outer.score.risk_score).toBe(plain.score.risk_score + 20);
    const driver = outer.explanation.drivers.find((d: { label: string }) => d.label === 'operator_override');
    expect(driver.impact_score).toBe(20);
    expect(driver.reason).toContain('ipv6 block');
    const inner = await v1('2a02:8000:1::5');
    expect(inner.score.verdict).toBe('block');
    expect(inner.location.country_code).toBe('FR');
  });

  test('an address no override covers is the index answer, unchanged', async () => {
    const b = await v1('81.3.0.1');
    expect(labels(b)).not.toContain('operator_override');
    expect(b.explanation.summary).not.toContain('operator override');
  });
});

describe('the file', () => {
  test('a bad line is reported with its line number; the others load', () => {
    const log: string[] = [];
    const h = OverridesHolder.open(overridesPath, (l) => log.push(l));
    expect(h.last?.applied).toBe(true);
    expect(h.current.size).toBe(6);
    expect(h.last?.errors).toEqual([{ line: 6, message: 'cidr "999.1.1.0/24" is not an IPv4 or IPv6 prefix or address' }]);
    expect(log.some((l) => l.includes(`${overridesPath}:6: cidr "999.1.1.0/24"`))).toBe(true);
  });

  test('JSON lines with the same names', () => {
    const p = join(dir, 'o.jsonl');
    writeFileSync(p, '{"cidr":"10.0.0.0/8","is_vpn":true}\n{"cidr":"10.1.0.0/16","risk":"x"}\n');
    const h = OverridesHolder.open(p, () => {});
    expect(h.current.size).toBe(1);
    expect(h.last?.errors[0]).toEqual({ line: 2, message: 'risk must be an integer from -100 to 100' });
  });

  test('edited while serving: picked up without a restart', async () => {
    writeFileSync(`${overridesPath}.tmp`, `${OVERRIDES}\n81.3.0.0/24,JP,,,,,,,added later\n`);
    renameSync(`${overridesPath}.tmp`, overridesPath);
    const deadline = Date.now() + 15_000;
    let country = '';
    while (Date.now() < deadline) {
      country = (await v1('81.3.0.1')).location?.country_code ?? '';
      if (country === 'JP') break;
      await Bun.sleep(200);
    }
    expect(country).toBe('JP');
  });

  test('a garbled file is refused by /reload and the overrides in force stay', async () => {
    writeFileSync(overridesPath, 'cidr,note\n1.2.3.4,"never closed\n5.6.7.8,x\n');
    const r = await call(server.url, '/reload', { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
    expect(r.status).toBe(200);
    const o = r.json().overrides;
    expect(o.applied).toBe(false);
    expect(o.refused).toContain('Quote Not Closed');
    expect(o.entries).toBe(7);
    expect((await v1('81.2.1.1')).location.country_code).toBe('NL');
    // Binary junk likewise.
    writeFileSync(overridesPath, new Uint8Array([0x63, 0x69, 0x64, 0x72, 0x0a, 0, 0xff, 0xfe, 0x00]));
    const r2 = await call(server.url, '/reload', { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
    expect(r2.json().overrides.applied).toBe(false);
    expect((await v1('81.3.0.1')).location.country_code).toBe('JP');
    writeFileSync(overridesPath, OVERRIDES);
    const r3 = await call(server.url, '/reload', { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
    expect(r3.json().overrides).toMatchObject({ applied: true, entries: 6, bad_lines: 1 });
    // The override is gone: the answer is the index's again, not a memo of the overridden one.
    const after = await v1('81.3.0.1');
    expect(after.location).toBeNull();
    expect(labels(after)).not.toContain('operator_override');
  });
});

describe('HTTP, bun run lookup and the MMDB export agree', () => {
  test('on random addresses inside and outside the overrides', async () => {
    writeFileSync(overridesPath, OVERRIDES);
    const offline = await OfflineLookup.open(indexPath, undefined, overridesPath);
    const mmdbPath = join(dir, 'small.mmdb');
    exportMmdb(IndexReader.open(indexPath), mmdbPath, Date.now(), offline.overrides.current);
    const mmdb = new Reader<Record<string, any>>(readFileSync(mmdbPath));
    const v4 = fc.oneof(
      fc.integer({ min: 0, max: 0xffff }).map((x) => formatIPv4(0x51020000 + x)), // 81.2.0.0/16
      fc.integer({ min: 0, max: 0x3ff }).map((x) => formatIPv4(0x51024400 + x)), // 81.2.68.0 - 81.2.71.255
      fc.integer({ min: 0, max: 0xffffffff }).map(formatIPv4),
    );
    const v6 = fc
      .tuple(fc.constantFrom(0x2a028000n, 0x2a028001n, 0x2a028000n), fc.bigInt({ min: 0n, max: 3n }), fc.bigInt({ min: 0n, max: (1n << 80n) - 1n }))
      .map(([top, sub, low]) => formatIPv6((top << 96n) | (sub << 80n) | low));
    await fc.assert(
      fc.asyncProperty(fc.oneof(v4, v6), async (ip) => {
        const http = await v1(ip);
        const cli = JSON.parse(offline.answer(ip, null)!);
        // The clock moves between the two answers only in the time zone offset's quarter hour: compare the rest.
        expect(cli.classification).toEqual(http.classification);
        expect(cli.score).toEqual(http.score);
        expect(cli.network).toEqual(http.network);
        expect(cli.location?.country_code).toEqual(http.location?.country_code);
        expect(cli.evidence).toEqual(http.evidence);
        const m = mmdb.get(ip);
        expect(m?.classification?.is_tor ?? false).toBe(http.classification.is_tor);
        expect(m?.classification?.is_vpn ?? false).toBe(http.classification.is_vpn);
        expect(m?.score?.risk_score ?? null).toBe(m ? http.score.risk_score : null);
        expect(m?.country?.iso_code ?? null).toBe(http.location?.country_code ?? null);
        expect(m?.city?.names?.en ?? null).toBe(http.location?.city ?? null);
        expect(m?.network?.org ?? null).toBe(http.network.org);
      }),
      { numRuns: 300, seed: 31 },
    );
  }, 60_000);

  test('`bun run lookup` reads IPINTEL_OVERRIDES like the server', () => {
    const p = Bun.spawnSync(['bun', 'run', resolve(import.meta.dir, '../../src/cli.ts'), 'lookup', '81.2.1.1', '--fields', 'location'], {
      env: { ...process.env, IPINTEL_INDEX: indexPath, IPINTEL_OVERRIDES: overridesPath },
    });
    expect(p.exitCode).toBe(0);
    expect(JSON.parse(p.stdout.toString()).location.city).toBe('Amsterdam');
    expect(p.stderr.toString()).toContain(':6: cidr');
  });
});

describe('a build with an `overrides` source', () => {
  let built: string;
  const buildDir = join(dir, 'with-overrides');
  beforeAll(async () => {
    Bun.spawnSync(['mkdir', '-p', buildDir]);
    built = await buildFromTexts(buildDir, 'built.idx', [
      { type: 'geo-csv', name: 'geo.csv', text: '81.2.69.0,81.2.69.255,GB,England,,London,EC1A,51.5142,-0.0931,Europe/London\n' },
      { type: 'overrides', name: 'ops.jsonl', text: '{"cidr":"81.2.69.0/25","country_code":"IE","note":"from the manifest"}\n{"cidr":"81.2.69.200","is_tor":"maybe"}\n{"cidr":"81.2.69.128/26","city":"Cork"}\n' },
    ]);
  }, 60_000);

  test('a bad line is skipped with its line number; the accepted entries apply to lookups', async () => {
    const reader = IndexReader.open(built);
    expect(reader.meta.sources.find((s) => s.type === 'overrides')).toMatchObject({ rows: 2, skipped: 1 });
    const lookup = await OfflineLookup.open(built);
    const a = JSON.parse(lookup.answer('81.2.69.10', null)!);
    expect(a.location.country_code).toBe('IE');
    expect(a.location.city).toBe('London');
    expect(a.evidence.signals.map((s: { label: string }) => s.label)).toContain('operator_override');
    expect(JSON.parse(lookup.answer('81.2.69.130', null)!).location).toMatchObject({ country_code: 'GB', city: 'Cork' });
    expect(JSON.parse(lookup.answer('81.2.69.250', null)!).evidence.signals.map((s: { label: string }) => s.label)).not.toContain('operator_override');
  });

  test('with IPINTEL_OVERRIDES as well: the file wins on the same prefix, the most specific entry wins across both', async () => {
    const file = join(buildDir, 'runtime.csv');
    writeFileSync(file, 'cidr,country_code\n81.2.69.0/25,PT\n81.2.0.0/16,ES\n');
    const lookup = await OfflineLookup.open(built, undefined, file);
    expect(JSON.parse(lookup.answer('81.2.69.10', null)!).location.country_code).toBe('PT');
    expect(JSON.parse(lookup.answer('81.2.69.130', null)!).location).toMatchObject({ country_code: 'GB', city: 'Cork' });
    expect(JSON.parse(lookup.answer('81.2.69.250', null)!).location.country_code).toBe('ES');
    // A new read of the file republishes the serving snapshot without building one table of both
    // (seconds for a large file, on every serving thread: issue 36 finding 8); the answers stay.
    const build = spyOn(OverrideTable, 'build');
    try {
      writeFileSync(file, 'cidr,country_code\n81.2.69.0/25,PT\n81.2.0.0/16,FR\n');
      expect(lookup.overrides.reload().applied).toBe(true);
      expect(JSON.parse(lookup.answer('81.2.69.250', null)!).location.country_code).toBe('FR');
      expect(JSON.parse(lookup.answer('81.2.69.10', null)!).location.country_code).toBe('PT');
      expect(JSON.parse(lookup.answer('81.2.69.130', null)!).location).toMatchObject({ country_code: 'GB', city: 'Cork' });
      expect(build).not.toHaveBeenCalled();
    } finally {
      build.mockRestore();
    }
    // The MMDB export applies the same table.
    const mmdbPath = join(buildDir, 'built.mmdb');
    exportMmdb(IndexReader.open(built), mmdbPath, Date.now(), lookup.overrides.tableFor(lookup.holder.current));
    const mmdb = new Reader<Record<string, any>>(readFileSync(mmdbPath));
    expect(['81.2.69.10', '81.2.69.130', '81.2.69.250'].map((ip) => mmdb.get(ip)?.country?.iso_code)).toEqual(['PT', 'GB', 'FR']);
  });
});

describe('bounds', () => {
  test('a file over the entry limit is refused as a whole', () => {
    const p = join(dir, 'many.csv');
    writeFileSync(p, `cidr\n${Array.from({ length: 12 }, (_, i) => `10.0.${i}.0/24`).join('\n')}\n`);
    expect(() => parseOverridesText(readFileSync(p, 'utf8'), p, 10)).toThrow('more than 10 entries');
    expect(parseOverridesText(readFileSync(p, 'utf8'), p, 12).entries).toHaveLength(12);
  });

  test('a file over the size limit is refused and the overrides in force stay', () => {
    const p = join(dir, 'big.csv');
    writeFileSync(p, 'cidr,country_code\n10.0.0.0/8,DE\n');
    const h = new OverridesHolder(p, () => {}, { maxFileBytes: 1_000 });
    expect(h.reload().applied).toBe(true);
    writeFileSync(p, `cidr,note\n${'10.0.0.0/8,x\n'.repeat(200)}`);
    const second = h.reload();
    expect(second.applied).toBe(false);
    expect(second.refused).toContain('over the limit of 1000');
    expect(h.current.find('10.1.2.3')?.fields.country_code).toBe('DE');
  });
});
