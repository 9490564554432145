/**
 * Read bounds of an untrusted copy (SourceContext.readLimits): size, gzip
 * inflation, line length and held ranges each stop a parse with a
 * FeedLimitError whose reason quotes nothing of the copy; without bounds (a
 * build of accepted copies) the same files read as before.
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { readFileSync, writeFileSync } from 'node:fs';
import { FeedError, FeedLimitError, SourceContext, type ReadLimits } from '../../index-builder/feed/source.ts';
import { PARSERS } from '../../index-builder/parsers/index.ts';
import { CoverageSink } from '../../index-builder/feed-coverage.ts';
import { tempFeed } from './temp-feed.ts';

const loose: ReadLimits = { maxBytes: 1 << 30, maxRatio: 1000, maxLineBytes: 1 << 20, maxRanges: 1e9 };

async function lines(path: string, limits: ReadLimits | null): Promise<string[]> {
  const ctx = new SourceContext(path, 'feed.txt', { type: 'cidr-list', path });
  ctx.readLimits = limits;
  const out: string[] = [];
  for await (const [line] of ctx.lines()) out.push(line);
  return out;
}

async function failure(work: Promise<unknown>): Promise<FeedLimitError> {
  try {
    await work;
  } catch (e) {
    if (e instanceof FeedLimitError) return e;
    throw e;
  }
  throw new Error('expected a FeedLimitError');
}

describe('line length', () => {
  test('a line of exactly the bound passes, one byte more fails with its line number', async () => {
    const at = tempFeed('at-bound.txt', ['a', 'x'.repeat(100), 'b']);
    expect(await lines(at, { ...loose, maxLineBytes: 100 })).toEqual(['a', 'x'.repeat(100), 'b']);
    const over = tempFeed('over-bound.txt', ['a', 'x'.repeat(101), 'b']);
    const e = await failure(lines(over, { ...loose, maxLineBytes: 100 }));
    expect(e.message).toBe('feed.txt:2: a line longer than 100 bytes');
  });

  test('many short lines across chunk boundaries pass; a long last line without a newline fails', async () => {
    const many = Array.from({ length: 50_000 }, (_, i) => `10.${i >> 8 & 255}.${i & 255}.0/24`);
    expect(await lines(tempFeed('many.txt', many), { ...loose, maxLineBytes: 20 })).toEqual(many);
    const tail = tempFeed('tail.txt', `1.2.3.0/24\n${'y'.repeat(300)}`);
    expect((await failure(lines(tail, { ...loose, maxLineBytes: 200 }))).reason).toBe('a line longer than 200 bytes');
  });
});

describe('size and inflation', () => {
  test('a plain file over the bound fails; the same file reads without bounds', async () => {
    const path = tempFeed('big.txt', Array.from({ length: 1000 }, () => '192.0.2.0/24'));
    expect((await failure(lines(path, { ...loose, maxBytes: 5000 }))).reason).toBe('is more than 5000 bytes (the bound for this feed)');
    expect(await lines(path, null)).toHaveLength(1000);
  });

  test('a .gz inflating past its ratio fails in the stream and in a whole read', async () => {
    const path = tempFeed('bomb.txt.gz', '#'.repeat(4 << 20) + '\n');
    expect((await failure(lines(path, { ...loose, maxRatio: 10 }))).reason).toMatch(/^decompresses to more than 1048576 bytes/);
    const ctx = new SourceContext(path, 'bomb.json.gz', { type: 'crawler-ranges', path });
    ctx.readLimits = { ...loose, maxRatio: 10 };
    expect(() => ctx.readText()).toThrow(FeedLimitError);
    ctx.readLimits = null;
    expect(ctx.readText().length).toBe((4 << 20) + 1);
  });
});

describe('held ranges', () => {
  test('a RIS dump holding more unique prefixes than the bound fails while reading, not after', async () => {
    const rows = Array.from({ length: 40 }, (_, i) => `64500\t2001:db8:${i.toString(16)}::/48\t100`);
    const path = tempFeed('ris.txt', rows);
    const ctx = new SourceContext(path, 'ris.txt', { type: 'ris-whois', path });
    ctx.readLimits = { ...loose, maxRanges: 10 };
    const sink = new CoverageSink();
    const e = await failure((await PARSERS['ris-whois']()).parse(ctx, sink.asBuildSink()));
    expect(e.message).toBe('ris.txt:11: more than 10 ranges (the bound for ris-whois)');
    expect(sink.v6.ranges).toBe(0);
  });
});

describe('format sniffing reads the first data character only', () => {
  test('a byte order mark and blank lines before the JSON', async () => {
    const path = tempFeed('bom.json', '\uFEFF\n\n  {"prefixes": [{"ipv4Prefix": "192.0.2.0/24"}]}\n');
    const ctx = new SourceContext(path, 'bom.json', { type: 'crawler-ranges', crawler: 'x', path });
    expect(await ctx.firstDataChar()).toBe('{');
  });
});

describe('coverage', () => {
  test('per family: addresses and /64s summed, the widest range as a prefix length', () => {
    const c = new CoverageSink();
    c.add(4, 0x0a000000, 0x0a0000ff);
    c.add(4, 0x0b000000, 0x0b000002);
    c.add(6, 0x20010db8n << 96n, (0x20010db8n << 96n) + (1n << 80n) - 1n);
    c.add(6, 1n, 1n);
    expect(c.v4).toEqual({ ranges: 2, units: 259, widest: 24 });
    expect(c.v6).toEqual({ ranges: 2, units: 65_537, widest: 48 });
    c.add(4, 0, 0xffffffff);
    expect(c.v4.widest).toBe(0);
  });
});

describe('a truncated gzip', () => {
  test('fails with a FeedError instead of waiting forever, bounded or not', async () => {
    const whole = tempFeed('whole.txt.gz', Array.from({ length: 20_000 }, (_, i) => `10.0.${i & 255}.0/24 # ${i}`));
    const bytes = readFileSync(whole);
    const path = tempFeed('truncated.txt.gz', '');
    writeFileSync(path, bytes.subarray(0, bytes.length >> 1));
    for (const limits of [loose, null]) {
      const started = performance.now();
      await expect(lines(path, limits)).rejects.toThrow(/feed\.txt(:\d+)?: cannot read/);
      expect(performance.now() - started).toBeLessThan(10_000);
    }
  });
});

describe('format sniff', () => {
  test('firstDataChar of an unreadable .gz copy fails as a FeedError naming the file (it hung on an unforwarded stream error)', async () => {
    const ctx = new SourceContext('/nonexistent/ipintel/feed.json.gz', 'feed.json.gz', { type: 'threat-feed', path: 'feed.json.gz' });
    const e = await ctx.firstDataChar().then(
      () => null,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(FeedError);
    expect((e as FeedError).message).toStartWith('feed.json.gz: cannot read:');
  }, 5000);
});
