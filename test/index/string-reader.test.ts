/**
 * StringReader keeps a bounded, direct-mapped cache of decoded strings: ids
 * that share a slot evict each other, and every read must still give the
 * string of its own id.
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { StringReader } from '../../src/index/tables.ts';
import { prng } from '../helpers/prng.ts';

/** A string table (offsets + UTF-8 bytes) of `texts`, id 0 being the empty "none" entry. */
function stringTable(texts: string[]): { offsets: Uint32Array; bytes: Uint8Array } {
  const encoded = texts.map((t) => new TextEncoder().encode(t));
  const offsets = new Uint32Array(encoded.length + 2);
  const bytes = new Uint8Array(encoded.reduce((a, e) => a + e.length, 0));
  let at = 0;
  encoded.forEach((e, i) => {
    bytes.set(e, at);
    at += e.length;
    offsets[i + 2] = at;
  });
  return { offsets, bytes };
}

describe('StringReader', () => {
  // More strings than cache slots (2^16), with non-ASCII text among them.
  const texts = Array.from({ length: 200_000 }, (_, i) => (i % 7 === 0 ? `Zürich ${i}` : `name-${i}`));
  const { offsets, bytes } = stringTable(texts);
  const reader = new StringReader(offsets, bytes);
  const textOf = (id: number) => texts[id - 1];

  test('id 0 and ids past the end read as null', () => {
    expect(reader.count).toBe(texts.length + 1);
    expect(reader.get(0)).toBeNull();
    expect(reader.get(texts.length + 1)).toBeNull();
    expect(reader.get(10_000_000)).toBeNull();
  });

  test('ids sharing a cache slot, read alternately, each give their own string', () => {
    for (let round = 0; round < 3; round++) {
      for (const id of [5, 5 + 65_536, 5 + 2 * 65_536, 5]) expect(reader.get(id)).toBe(textOf(id));
    }
  });

  test('every id read in random order, twice, gives its string', () => {
    const rnd = prng(3);
    const ids = Array.from({ length: 300_000 }, () => 1 + Math.floor(rnd() * texts.length));
    for (const pass of [1, 2]) {
      let wrong = 0;
      for (const id of ids) if (reader.get(id) !== textOf(id)) wrong++;
      expect({ pass, wrong }).toEqual({ pass, wrong: 0 });
    }
  });
});
