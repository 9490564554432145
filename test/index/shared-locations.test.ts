/** Format 6: records at one location share one decoded, frozen location object (TGEO), equal to what its row says. */
import { beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { RECORD_WIDTH, RecordCol, Section, TableLayout } from '../../src/index/format.ts';
import { u32Section } from '../../src/index/map-index-file.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';

let reader: IndexReader;
beforeAll(async () => {
  reader = IndexReader.open(await fixtureIndexPath());
}, 120_000);

describe('locations (TGEO)', () => {
  test('two records at one location read the same frozen object, equal to its row; no location reads null', () => {
    const rows = u32Section(reader.file, Section.RECORDS);
    const table = u32Section(reader.file, Section.GEO);
    const width = TableLayout[Section.GEO].length;
    const firstAt = new Map<number, number>();
    let pair: [number, number, number] | null = null;
    let none = -1;
    for (let id = 1; id < rows.length / RECORD_WIDTH && (pair === null || none < 0); id++) {
      const loc = rows[id * RECORD_WIDTH + RecordCol.GEO];
      if (loc === 0) none = id;
      else if (firstAt.has(loc)) pair ??= [firstAt.get(loc)!, id, loc];
      else firstAt.set(loc, id);
    }
    expect(pair).not.toBeNull();
    const [a, b, loc] = pair!;
    const geo = reader.record(a).geo!;
    expect(reader.record(b).geo).toBe(geo);
    expect(Object.isFrozen(geo)).toBe(true);
    expect(() => {
      (geo as { city: string | null }).city = 'changed';
    }).toThrow();
    expect(geo.countryCode).toBe(reader.strings.get(table[loc * width]));
    expect(geo.city).toBe(reader.strings.get(table[loc * width + 2]));
    expect({ ...geo }).toEqual(geo);
    if (none > 0) expect(reader.record(none).geo).toBeNull();
  });

  test('the reserved columns after the location are zero in every row', () => {
    const rows = u32Section(reader.file, Section.RECORDS);
    let nonZero = 0;
    for (let base = 0; base < rows.length; base += RECORD_WIDTH) for (let c = RecordCol.GEO + 1; c < RECORD_WIDTH; c++) nonZero |= rows[base + c];
    expect(nonZero).toBe(0);
  });
});
