/**
 * The overrides interval table against the rule it implements, checked by
 * brute force: for random sets of nested, overlapping and repeated IPv4 and
 * IPv6 prefixes, every address is answered by the longest prefix covering
 * it, and for the same prefix by the later line.
 */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import type { OverrideEntry } from '../../src/contract/overrides.ts';
import { OverrideTable } from '../../src/lookup/overrides/table.ts';
import { overridesOver } from '../../src/lookup/overrides/layered.ts';
import { formatIPv4, formatIPv6, prefixRange } from '../../src/net/ip.ts';

/** Prefixes inside a small space (10.0.0.0/20 or 2001:db8::/116) so that they nest and repeat often. */
const entries = (family: 4 | 6) =>
  fc.array(
    fc.tuple(fc.integer({ min: 0, max: 4095 }), fc.integer({ min: 20, max: 32 })).map(([offset, len]) => {
      const base = family === 4 ? 0x0a000000 + offset : (0x20010db8n << 96n) + BigInt(offset);
      const l = family === 4 ? len : len + 96;
      const { start, end } = prefixRange(family, base, l);
      return { family, start, end, len: l };
    }),
    { maxLength: 40 },
  );

const brute = (list: OverrideEntry[], x: bigint): number => {
  let best = -1;
  for (let i = 0; i < list.length; i++) {
    const e = list[i];
    if (BigInt(e.start) <= x && x <= BigInt(e.end) && (best < 0 || e.len >= list[best].len)) best = i;
  }
  return best;
};

for (const family of [4, 6] as const) {
  test(`IPv${family}: the longest covering prefix answers, the later line for the same prefix`, () => {
    fc.assert(
      fc.property(entries(family), fc.array(fc.integer({ min: 0, max: 8191 }), { minLength: 50, maxLength: 50 }), (raw, probes) => {
        const list: OverrideEntry[] = raw.map((e, i) => ({ ...e, fields: { note: `line ${i + 1}` }, line: i + 1 }));
        const table = OverrideTable.build(list);
        for (const p of probes) {
          const x = family === 4 ? BigInt(0x0a000000 + p) : (0x20010db8n << 96n) + BigInt(p);
          const ip = family === 4 ? formatIPv4(Number(x)) : formatIPv6(x);
          const want = brute(list, x);
          const got = table.find(ip);
          expect(got?.fields.note ?? null).toBe(want < 0 ? null : `line ${want + 1}`);
          if (want >= 0) expect(got!.cidr).toBe(`${family === 4 ? formatIPv4(Number(list[want].start)) : formatIPv6(BigInt(list[want].start))}/${list[want].len}`);
        }
        // Rebuilt from its own entries, the table answers the same.
        const again = OverrideTable.build(table.toEntries());
        for (const p of probes.slice(0, 10)) {
          const ip = family === 4 ? formatIPv4(0x0a000000 + p) : formatIPv6((0x20010db8n << 96n) + BigInt(p));
          expect(again.find(ip)?.cidr ?? null).toBe(table.find(ip)?.cidr ?? null);
        }
      }),
      { numRuns: 300, seed: 7 },
    );
  });
}

test('an IPv4 address written as IPv6 (::ffff:a.b.c.d) is answered by the IPv4 overrides', () => {
  const table = OverrideTable.build([{ family: 4, start: 0x0a000000, end: 0x0a0000ff, len: 24, fields: { note: 'v4' }, line: 1 }]);
  expect(table.find('::ffff:10.0.0.7')?.fields.note).toBe('v4');
  expect(table.find('10.0.1.1')).toBeNull();
  expect(table.find('not an address')).toBeNull();
});

// The file's table over an index's own, asked in turn (layered.ts), answers as one table built from both
// (the index's entries first, so the file's line wins on the same prefix): the serving threads never build it.
for (const family of [4, 6] as const) {
  test(`IPv${family}: the file's table layered over the index's own answers as the table built from both`, () => {
    fc.assert(
      fc.property(entries(family), entries(family), fc.array(fc.integer({ min: 0, max: 8191 }), { minLength: 50, maxLength: 50 }), (ownRaw, fileRaw, probes) => {
        const own: OverrideEntry[] = ownRaw.map((e, i) => ({ ...e, fields: { note: `own ${i + 1}` }, line: i + 1 }));
        const file: OverrideEntry[] = fileRaw.map((e, i) => ({ ...e, fields: { note: `file ${i + 1}` }, line: i + 1 }));
        const combined = OverrideTable.build([...own, ...file]);
        const layered = overridesOver(OverrideTable.build(file), OverrideTable.build(own));
        expect(layered.size === 0).toBe(combined.size === 0);
        for (const p of probes) {
          const ip = family === 4 ? formatIPv4(0x0a000000 + p) : formatIPv6((0x20010db8n << 96n) + BigInt(p));
          const want = combined.find(ip);
          const got = layered.find(ip);
          expect(got === null ? null : [got.cidr, got.fields.note]).toEqual(want === null ? null : [want.cidr, want.fields.note]);
        }
      }),
      { numRuns: 300, seed: 11 },
    );
  });
}
