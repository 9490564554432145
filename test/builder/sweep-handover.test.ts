import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { Collector } from '../../index-builder/merge/collector.ts';
import { sweep, type FamilyIntervals } from '../../index-builder/merge/sweep.ts';
import { parseCidr } from '../../src/net/ip.ts';

/** A collector with a few ASN ranges of both families. */
function filled(): Collector {
  const c = new Collector();
  for (const [cidr, asn] of [['192.0.2.0/24', 64500], ['198.51.100.0/24', 64501], ['2001:db8::/32', 64502]] as const) {
    const p = parseCidr(cidr)!;
    c.asn(p.family, p.start, p.end, asn);
  }
  return c;
}

describe('sweep: each family handed over as soon as it is swept', () => {
  test('onFamily gets IPv4 then IPv6 with their arrays; the merged index keeps only their counts', () => {
    const plain = sweep(filled());
    const seen: FamilyIntervals[] = [];
    const merged = sweep(filled(), undefined, (iv) => seen.push({ ...iv, startWords: iv.startWords.slice(), recs: iv.recs.slice() }));
    expect(seen.map((iv) => iv.family)).toEqual([4, 6]);
    // What the writer receives is what the sweep without a hand-over returns.
    for (const [i, family] of [[0, 'v4'], [1, 'v6']] as const) {
      expect([...seen[i].startWords]).toEqual([...plain[family].startWords]);
      expect([...seen[i].recs]).toEqual([...plain[family].recs]);
      expect(merged[family].count).toBe(plain[family].count);
      expect(merged[family].startWords.length).toBe(0);
      expect(merged[family].recs.length).toBe(0);
    }
    expect(plain.v4.count).toBeGreaterThan(3);
    expect(merged.recordCount).toBe(plain.recordCount);
  });
});
