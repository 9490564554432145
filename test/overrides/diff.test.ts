/**
 * `bun run diff` (issue 31) over two small real builds whose manifests
 * differ by known edits: a VPN list gains a /16 (and an IPv6 /48), a
 * geofeed moves a /24 to another country, a Tor exit leaves. The diff
 * reports exactly those counts and ranges; two builds of one manifest
 * differ in nothing; the JSON output has the declared shape.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { IndexDiff, type FieldDiffBody, type IndexDiffBody } from '../../src/contract/diff.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { diffIndexes } from '../../src/lookup/diff/sweep.ts';
import { toJsonSchema } from '../helpers/openapi-responses.ts';
import { buildFromTexts, type TextSource } from '../helpers/small-build.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-diff-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const GEO: TextSource = { type: 'geo-csv', name: 'geo.csv', text: '81.2.0.0,81.2.255.255,GB,England,,London,EC1A,51.5142,-0.0931,Europe/London\n' };
const ASN: TextSource = { type: 'asn-csv', name: 'asn.csv', text: '81.2.0.0,81.2.127.255,20712,Andrews & Arnold Ltd\n5.0.0.0,5.255.255.255,3333,RIPE NCC\n' };
const geofeed = (line: string): TextSource => ({ type: 'geofeed', name: 'geofeed.csv', text: `# prefix,country,region,city,postal\n${line}\n` });
const vpn = (lines: string[]): TextSource => ({ type: 'cidr-list', name: 'vpn.txt', text: `${lines.join('\n')}\n`, options: { category: 'vpn', provider: 'ExampleVPN' } });
const tor = (ips: string[]): TextSource => ({ type: 'tor-exits', name: 'tor.txt', text: `${ips.join('\n')}\n` });

const OLD = [GEO, ASN, geofeed('81.2.69.0/24,DE,,Berlin,'), vpn(['5.10.0.0/24']), tor(['81.2.70.1', '81.2.70.2'])];
const NEW = [GEO, ASN, geofeed('81.2.69.0/24,FR,,Paris,'), vpn(['5.10.0.0/24', '5.20.0.0/16', '2a02:8000::/48']), tor(['81.2.70.1'])];

let oldPath: string;
let newPath: string;
let againPath: string;
let diff: IndexDiffBody;

const field = (name: string): FieldDiffBody => diff.fields.find((f) => f.field === name)!;
const space = (v4: number, v6 = 0) => ({ ipv4_addresses: v4, ipv6_64s: v6 });

beforeAll(async () => {
  // Each build writes its sources into its own folder (the file names repeat).
  for (const d of ['old', 'new', 'again']) Bun.spawnSync(['mkdir', '-p', join(dir, d)]);
  oldPath = await buildFromTexts(join(dir, 'old'), 'old.idx', OLD, '2026-11-18T12:00:00Z');
  newPath = await buildFromTexts(join(dir, 'new'), 'new.idx', NEW, '2026-11-19T12:00:00Z');
  againPath = await buildFromTexts(join(dir, 'again'), 'again.idx', OLD, '2026-11-20T12:00:00Z');
  diff = diffIndexes(IndexReader.open(oldPath), IndexReader.open(newPath), { top: 5 });
}, 120_000);

test('the geofeed moved a /24: country and city changed on exactly those 256 addresses', () => {
  expect(field('country').changed).toEqual(space(256));
  expect(field('country').largest).toEqual([{ family: 4, range: '81.2.69.0 - 81.2.69.255', cidr: '81.2.69.0/24', size: 256, before: 'DE', after: 'FR' }]);
  expect(field('city').changed).toEqual(space(256));
  expect(field('city').largest[0]).toMatchObject({ cidr: '81.2.69.0/24', before: 'Berlin', after: 'Paris' });
});

test('the VPN list gained a /16 and an IPv6 /48: newly flagged, nothing unflagged', () => {
  const v = field('is_vpn');
  expect(v.changed).toEqual(space(65_536, 65_536));
  expect(v.flagged).toEqual(space(65_536, 65_536));
  expect(v.unflagged).toEqual(space(0, 0));
  expect(v.largest.map((r) => [r.cidr, r.size, r.before, r.after])).toEqual([
    ['5.20.0.0/16', 65_536, false, true],
    ['2a02:8000::/48', 65_536, false, true],
  ]);
});

test('a Tor exit left: one address unflagged', () => {
  const t = field('is_tor');
  expect(t.changed).toEqual(space(1));
  expect(t.flagged).toEqual(space(0));
  expect(t.unflagged).toEqual(space(1));
  expect(t.largest).toEqual([{ family: 4, range: '81.2.70.2 - 81.2.70.2', cidr: '81.2.70.2/32', size: 1, before: true, after: false }]);
  // is_proxy is true for VPNs and Tor alike: both edits show there.
  expect(field('is_proxy').flagged).toEqual(space(65_536, 65_536));
  expect(field('is_proxy').unflagged).toEqual(space(1));
  expect(field('threat').changed).toEqual(space(1));
  // Neither build holds threat lists: without Tor the level is Unknown, not Low.
  expect(field('threat').largest[0]).toMatchObject({ before: 'Medium', after: 'Unknown' });
});

test('scores follow the edits: the new VPN space and the former exit change band and verdict', () => {
  expect(field('score_band').changed).toEqual(space(65_537, 65_536));
  expect(field('verdict').changed).toEqual(space(65_537, 65_536));
});

test('nothing else changed', () => {
  for (const name of ['asn', 'org', 'allocation', 'routing_origin', 'is_datacenter', 'is_privacy_relay', 'is_mobile', 'is_known_crawler', 'is_bogon']) {
    expect({ name, changed: field(name).changed, largest: field(name).largest }).toEqual({ name, changed: space(0), largest: [] });
  }
});

test('two builds of one manifest: zero changes in every group', () => {
  const same = diffIndexes(IndexReader.open(oldPath), IndexReader.open(againPath));
  for (const f of same.fields) expect({ field: f.field, changed: f.changed, largest: f.largest.length }).toEqual({ field: f.field, changed: space(0), largest: 0 });
});

/** A validator of the declared shape (the TypeBox declaration is JSON Schema). */
function validatorOf(schema: unknown) {
  const ajv = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  return ajv.compile(toJsonSchema(JSON.parse(JSON.stringify(schema))) as object);
}

test('--format json has the declared shape; --field narrows the groups', () => {
  const valid = validatorOf(IndexDiff);
  const p = Bun.spawnSync(['bun', 'run', resolve(import.meta.dir, '../../src/cli.ts'), 'diff', oldPath, newPath, '--format', 'json', '--field', 'country,is_tor', '--top', '2']);
  expect(p.exitCode).toBe(0);
  const body = JSON.parse(p.stdout.toString());
  expect(valid(body) ? [] : valid.errors).toEqual([]);
  expect(body.fields.map((f: FieldDiffBody) => f.field)).toEqual(['country', 'is_tor']);
  expect(valid(JSON.parse(JSON.stringify(diff))) ? [] : valid.errors).toEqual([]);
  // The validator can fail: a count below zero is refused.
  expect(valid({ ...body, fields: [{ ...body.fields[0], changed: { ipv4_addresses: -1, ipv6_64s: 0 } }] })).toBe(false);
  const bad = Bun.spawnSync(['bun', 'run', resolve(import.meta.dir, '../../src/cli.ts'), 'diff', oldPath, newPath, '--field', 'colour']);
  expect(bad.exitCode).toBe(2);
  expect(bad.stderr.toString()).toContain('unknown field group(s): colour');
});
