/** RowSet: the sweep's record deduplication gives the ids a Map keyed by row text would. */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import { RowSet } from '../../index-builder/merge/row-set.ts';

describe('RowSet', () => {
  test('equal rows share an id, ids count in insertion order, rows read back (through many table growths)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        // Small value ranges make duplicates frequent; u32 extremes check the unsigned handling.
        fc.array(fc.array(fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom(0xffffffff, 0x80000000)), { minLength: 12, maxLength: 12 }), {
          maxLength: 3000,
        }),
        (width, raw) => {
          const set = new RowSet(width, 1);
          const reference = new Map<string, number>();
          for (const r of raw) {
            const row = r.slice(0, width);
            const key = row.join(',');
            const expected = reference.get(key) ?? reference.size;
            reference.set(key, expected);
            expect(set.idOf(row)).toBe(expected);
          }
          expect(set.size).toBe(reference.size);
          const rows = set.rows.view();
          for (const [key, id] of reference) expect(Array.from(rows.subarray(id * width, (id + 1) * width)).join(',')).toBe(key);
        },
      ),
      { numRuns: 60 },
    );
  });

  test('a hundred thousand distinct rows keep distinct ids', () => {
    const set = new RowSet(3);
    for (let i = 0; i < 100_000; i++) expect(set.idOf([i, i >>> 3, 7])).toBe(i);
    for (let i = 0; i < 100_000; i += 997) expect(set.idOf([i, i >>> 3, 7])).toBe(i);
    expect(set.size).toBe(100_000);
  });
});
