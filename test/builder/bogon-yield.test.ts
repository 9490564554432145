/**
 * A bogon claim yields where registry allocation data in the same build is
 * newer and says allocated or assigned (decided in the merge, by the sources'
 * dates): the 2024 fullbogons list against RIR delegations of 2025/2026.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { Collector } from '../../index-builder/merge/collector.ts';
import { yieldsBogon } from '../../index-builder/merge/records.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { Flag } from '../../src/index/record.ts';
import { parseCidr } from '../../src/net/ip.ts';
import { assessRecord, coverageOf, DEFAULT_POLICY } from '../../src/scoring/index.ts';
import { openCollected } from '../helpers/collected-index.ts';
import { fullIndexPath } from '../helpers/full-index.ts';
import { describeWithShared } from '../helpers/shared-feeds.ts';

const LIST_2024 = '2024-03-10T16:55:01.000Z';
const block = (over: object) => ({ registry: 'apnic', status: 'allocated', blockStart: 0, blockEnd: 0, asOf: '2026-06-17T00:00:00.000Z', ...over });

describe('the rule', () => {
  test('only a registry (not IANA) saying allocated/assigned, in a file newer than the list', () => {
    expect(yieldsBogon(block({}), LIST_2024)).toBe(true);
    expect(yieldsBogon(block({ status: 'assigned' }), LIST_2024)).toBe(true);
    expect(yieldsBogon(block({ status: 'available' }), LIST_2024)).toBe(false);
    expect(yieldsBogon(block({ status: 'reserved' }), LIST_2024)).toBe(false);
    expect(yieldsBogon(block({ registry: 'iana' }), LIST_2024)).toBe(false);
    expect(yieldsBogon(block({ asOf: '2023-03-22T00:00:00.000Z' }), LIST_2024)).toBe(false);
    expect(yieldsBogon(block({ asOf: undefined }), LIST_2024)).toBe(false);
    expect(yieldsBogon(undefined, LIST_2024)).toBe(false);
  });

  test('in the merge: per interval, and the counts are recorded in META', () => {
    const c = new Collector();
    const list = parseCidr('203.0.112.0/22')!;
    c.bogon(4, list.start, list.end, LIST_2024);
    const newer = parseCidr('203.0.113.0/24')!;
    c.allocation(4, newer.start, newer.end, block({ blockStart: newer.start, blockEnd: newer.end }));
    const older = parseCidr('203.0.114.0/24')!;
    c.allocation(4, older.start, older.end, block({ blockStart: older.start, blockEnd: older.end, asOf: '2014-08-03T00:00:00.000Z' }));
    const { reader, remove } = openCollected(c, 'bogon-yield');
    try {
      const flags = (ip: string) => reader.lookup(ip)!.record.flags & Flag.BOGON;
      expect(flags('203.0.112.1')).toBe(Flag.BOGON);
      expect(flags('203.0.113.1')).toBe(0);
      expect(flags('203.0.114.1')).toBe(Flag.BOGON);
      expect(reader.meta.bogonsYielded!.v4).toEqual({ intervals: 1, addresses: 256 });
    } finally {
      remove();
    }
  });
});

describeWithShared('on the real snapshots', () => {
  let reader: IndexReader;
  beforeAll(async () => {
    reader = IndexReader.open(await fullIndexPath());
  }, 300_000);
  afterAll(() => {
    reader = undefined as unknown as IndexReader;
  });

  // APNIC (file of 2026-06-17) allocated these in 2025; the fullbogons list of 2024-03-10 covers them.
  for (const [ip, date] of [
    ['27.126.156.1', '2025-09-23'],
    ['43.225.128.1', '2025-09-15'],
    ['2001:df0:a641::1', '2025-07-30'],
  ] as const) {
    test(`${ip}, allocated ${date}: no bogon_address`, () => {
      const hit = reader.lookup(ip)!;
      expect(hit.record.flags & Flag.BOGON).toBe(0);
      expect(hit.record.allocation?.date).toBe(date);
      const coverage = coverageOf(reader.meta, Date.parse('2026-11-25T00:00:00Z'));
      const a = assessRecord(hit.record, { verifiedCrawler: null, coverage }, DEFAULT_POLICY);
      expect(a.evidence.signals.map((s) => s.label)).not.toContain('bogon_address');
      expect(a.decision.profile).not.toBe('bogon');
    });
  }

  test('space no newer registry data calls allocated stays bogon, and META counts what yielded', () => {
    // 0.0.0.0/8 and IANA-reserved space: the list's claim stands.
    expect(reader.lookup('240.0.0.1')!.record.flags & Flag.BOGON).toBe(Flag.BOGON);
    const y = reader.meta.bogonsYielded!;
    expect(y.v4.addresses).toBeGreaterThan(1_000_000);
    expect(y.v4.intervals).toBeGreaterThan(1000);
    expect(BigInt(y.v6.addresses)).toBeGreaterThan(0n);
  });
});
