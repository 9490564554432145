/**
 * V1BodyCache (the full v1 body composed from parts, the scored part shared
 * per scoring view) must give exactly JSON.stringify(buildV1(...)) whatever changes:
 * the address, the family, the RDAP owner, a crawler proof, the UTC offset of
 * the record's time zone across a DST change, and (a new snapshot, a new memo)
 * the policy and the index.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { buildV1, type V1Context } from '../../src/lookup/v1.ts';
import { loadPolicy, type Policy } from '../../src/scoring/index.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';
import { prng } from '../helpers/prng.ts';
import { answerOf, memoOf } from '../helpers/v1-memo.ts';
import { SHARED_FEEDS_DIR, testWithShared } from '../helpers/shared-feeds.ts';

let reader: IndexReader;
let policy: Policy;
let dir: string;
beforeAll(async () => {
  reader = IndexReader.open(await fixtureIndexPath());
  policy = await loadPolicy();
  dir = mkdtempSync(join(tmpdir(), 'ipintel-v1body-'));
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ctxOf = (over: Partial<V1Context> = {}): V1Context => ({ scoring: { verifiedCrawler: null }, policy, rdapOwner: null, now: Date.parse('2026-11-22T00:00:00Z'), ...over });
const expected = (ip: string, ctx: V1Context) => JSON.stringify(buildV1(reader.lookup(ip)!, ctx, null));

test('equals the built object for random IPv4 and IPv6 addresses, first and repeated calls', () => {
  const cache = memoOf(reader, ctxOf());
  const rnd = prng(99);
  const byte = () => Math.floor(rnd() * 256);
  const hex = () => Math.floor(rnd() * 65536).toString(16);
  const ips: string[] = ['8.8.8.8', '10.0.0.1', '185.220.101.1', '5.101.96.10', '::ffff:5.101.96.10', '2001:4860:4801:10::1', '2a03:b0c0:0:108::1', '::1'];
  for (let i = 0; i < 3000; i++) ips.push(`${1 + Math.floor(rnd() * 223)}.${byte()}.${byte()}.${byte()}`);
  for (let i = 0; i < 500; i++) ips.push(`2${Math.floor(rnd() * 4)}${hex().padStart(2, '0').slice(0, 2)}:${hex()}:${hex()}::${hex()}`);
  const ctx = ctxOf();
  let shared = 0;
  const records = new Set<number>(); // by id: a record is a fresh view per lookup, the memo keys by id
  for (const ip of ips) {
    const hit = reader.lookup(ip);
    expect(hit).not.toBeNull();
    if (records.has(hit!.recordId)) shared++;
    records.add(hit!.recordId);
    const want = expected(ip, ctx);
    expect(cache.body(hit!, answerOf(ctx))).toBe(want);
    expect(cache.body(hit!, answerOf(ctx))).toBe(want);
  }
  expect(shared).toBeGreaterThan(100); // the memo was actually exercised across addresses
});

test('another RDAP owner or a crawler proof is reflected, never a stale body; another policy is another memo', () => {
  const base = ctxOf();
  const cache = memoOf(reader, base);
  const hit = reader.lookup('8.8.8.8')!;
  expect(cache.body(hit, answerOf(base))).toBe(expected('8.8.8.8', base));
  const other: Policy = { ...policy, policy_version: 'test-policy-2' };
  const withPolicy = ctxOf({ policy: other });
  const otherMemo = memoOf(reader, withPolicy);
  expect(otherMemo.body(hit, answerOf(withPolicy))).toBe(expected('8.8.8.8', withPolicy));
  expect(JSON.parse(otherMemo.body(hit, answerOf(withPolicy))).decision.policy_version).toBe('test-policy-2');
  expect(cache.body(hit, answerOf(base))).toBe(expected('8.8.8.8', base));
  const withOwner = ctxOf({ rdapOwner: 'Google LLC' });
  expect(JSON.parse(cache.body(hit, answerOf(withOwner))).network.owner).toBe('Google LLC');
  expect(cache.body(hit, answerOf(withOwner))).toBe(expected('8.8.8.8', withOwner));
  const gbot = reader.lookup('2001:4860:4801:10::1')!;
  const proved = ctxOf({ scoring: { verifiedCrawler: { key: 'googlebot', hostname: 'crawl-1.googlebot.com' } } });
  cache.body(gbot, answerOf(base));
  expect(cache.body(gbot, answerOf(proved))).toBe(JSON.stringify(buildV1(gbot, proved, null)));
  expect(JSON.parse(cache.body(gbot, answerOf(proved))).classification.is_verified_crawler).toBe(true);
  expect(JSON.parse(cache.body(gbot, answerOf(base))).classification.is_verified_crawler).toBe(false);
});

test('the time zone offset follows daylight saving time', async () => {
  const csv = join(dir, 'ny.csv');
  writeFileSync(csv, '81.2.69.0,81.2.69.255,US,New York,,New York,10001,40.7,-74.0,America/New_York\n');
  const out = join(dir, 'ny.idx');
  await buildIndex({ sources: [{ options: { type: 'geo-csv', path: csv }, absPath: csv, displayPath: 'ny.csv' }], out, quiet: true, builtAtMs: Date.parse('2026-10-01T00:00:00Z') });
  const ny = IndexReader.open(out);
  const hit = ny.lookup('81.2.69.10')!;
  const cache = memoOf(ny, ctxOf());
  const summer = ctxOf({ now: Date.parse('2026-07-01T12:00:00Z') });
  const winter = ctxOf({ now: Date.parse('2026-12-01T12:00:00Z') });
  expect(JSON.parse(cache.body(hit, answerOf(summer))).location.timezone).toBe('-04:00');
  expect(JSON.parse(cache.body(hit, answerOf(winter))).location.timezone).toBe('-05:00');
  expect(cache.body(hit, answerOf(winter))).toBe(JSON.stringify(buildV1(hit, winter, null)));
}, 60_000);

testWithShared('records of a real index share few scoring views: the scored part is computed a few hundred times, not per record', async () => {
  const reader = IndexReader.open(await fixtureIndexPath(SHARED_FEEDS_DIR));
  const expected = (ip: string, ctx: V1Context) => JSON.stringify(buildV1(reader.lookup(ip)!, ctx, null));
  const cache = memoOf(reader, ctxOf());
  const rnd = prng(7);
  const byte = () => Math.floor(rnd() * 256);
  const ctx = ctxOf();
  const records = new Set<unknown>();
  for (let i = 0; i < 5000; i++) {
    const ip = `${1 + Math.floor(rnd() * 223)}.${byte()}.${byte()}.${byte()}`;
    const hit = reader.lookup(ip)!;
    records.add(hit.record);
    expect(cache.body(hit, answerOf(ctx))).toBe(expected(ip, ctx));
  }
  expect(records.size).toBeGreaterThan(3000);
  expect(cache.views).toBeGreaterThan(1);
  expect(cache.views).toBeLessThan(records.size / 10);
}, 120_000); // the real-snapshot fixture index may have to be built first

test('the memo holds at most its slots (IPINTEL_MEMORY_MB sizes it): answers stay exact', () => {
  const slots = 128;
  const cache = memoOf(reader, ctxOf(), slots, 256);
  const rnd = prng(11);
  const byte = () => Math.floor(rnd() * 256);
  const ctx = ctxOf();
  const hits = [];
  for (let i = 0; i < 20_000; i++) {
    const ip = `${1 + Math.floor(rnd() * 223)}.${byte()}.${byte()}.${byte()}`;
    const hit = reader.lookup(ip)!;
    // Each address twice, so the admission lets records in.
    cache.body(hit, answerOf(ctx));
    if (i % 10 === 0) expect(cache.body(hit, answerOf(ctx))).toBe(expected(ip, ctx));
    hits.push(hit);
  }
  const distinct = new Set(hits.map((h) => h.recordId)).size;
  const held = new Set(hits.filter((h) => cache.holds(h)).map((h) => h.recordId));
  expect(distinct).toBeGreaterThan(slots); // more records than slots were asked for
  expect(held.size).toBeGreaterThan(slots / 4);
  expect(held.size).toBeLessThanOrEqual(slots);
  expect(cache.views).toBeLessThanOrEqual(256);
}, 60_000);

test('a reloaded index with the same record ids but other facts never gets the old index answer', async () => {
  const build = async (name: string, city: string) => {
    const csv = join(dir, `${name}.csv`);
    writeFileSync(csv, `81.2.69.0,81.2.69.255,GB,${city},,${city},,51.5,-0.1,Europe/London\n`);
    const out = join(dir, `${name}.idx`);
    await buildIndex({ sources: [{ options: { type: 'geo-csv', path: csv }, absPath: csv, displayPath: `${name}.csv` }], out, quiet: true, builtAtMs: Date.parse('2026-10-01T00:00:00Z') });
    return IndexReader.open(out);
  };
  const before = await build('before', 'London');
  const after = await build('after', 'Leeds');
  const ctx = ctxOf();
  const cache = memoOf(before, ctx);
  const a = before.lookup('81.2.69.10')!;
  const b = after.lookup('81.2.69.10')!;
  expect(b.recordId).toBe(a.recordId); // the case that matters: same id, other facts
  expect(JSON.parse(cache.body(a, answerOf(ctx))).location.city).toBe('London');
  // A hit of another index reaching the old snapshot's memo is answered for itself, never from the memo.
  expect(cache.body(b, answerOf(ctx))).toBe(JSON.stringify(buildV1(b, ctx, null)));
  expect(cache.holds(b)).toBe(false);
  // The new index's snapshot has its own memo.
  const next = memoOf(after, ctx);
  expect(JSON.parse(next.body(b, answerOf(ctx))).location.city).toBe('Leeds');
  expect(JSON.parse(next.body(b, answerOf(ctx))).location.city).toBe('Leeds');
}, 60_000);

test('a cached RDAP owner appearing (or going) for an address already answered changes network.owner at once', () => {
  const plain = ctxOf();
  const cache = memoOf(reader, plain);
  const hit = reader.lookup('8.8.8.8')!;
  const owned = ctxOf({ rdapOwner: 'Example Owner LLC' });
  expect(cache.body(hit, answerOf(plain))).toBe(expected('8.8.8.8', plain));
  expect(JSON.parse(cache.body(hit, answerOf(owned))).network.owner).toBe('Example Owner LLC');
  expect(cache.body(hit, answerOf(owned))).toBe(expected('8.8.8.8', owned));
  expect(cache.body(hit, answerOf(plain))).toBe(expected('8.8.8.8', plain));
});
