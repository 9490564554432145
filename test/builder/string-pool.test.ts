import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { StringPool } from '../../index-builder/merge/string-pool.ts';

describe('StringPool: the file string table as UTF-8 bytes', () => {
  test('ids in first-seen order; empty, null and undefined are 0; equal strings share an id', () => {
    const p = new StringPool();
    expect(p.id('')).toBe(0);
    expect(p.id(null)).toBe(0);
    expect(p.id(undefined)).toBe(0);
    expect(p.id('AS13335')).toBe(1);
    expect(p.id('1.1.1.0/24')).toBe(2);
    expect(p.id('AS13335')).toBe(1);
    expect(p.count).toBe(3);
  });

  test('the encoded table: offsets and bytes exactly as the reader expects, non-ASCII as UTF-8', () => {
    const p = new StringPool();
    for (const s of ['ab', 'Zürich', '東京', 'ab', '\u{1F600}x']) p.id(s);
    const { offsets, bytes } = p.encoded();
    const list = ['', 'ab', 'Zürich', '東京', '\u{1F600}x'];
    const expected = list.map((s) => new TextEncoder().encode(s));
    expect([...offsets]).toEqual(expected.reduce<number[]>((acc, b) => [...acc, acc[acc.length - 1] + b.length], [0]));
    expect(Buffer.from(bytes).toString('utf8')).toBe(list.join(''));
    // 'Zürich' and a string with the same bytes read as latin1 are different strings.
    expect(p.id('ZÃ¼rich')).toBe(5);
  });

  test('keeps every id through many re-hashes', () => {
    const p = new StringPool();
    const n = 200_000;
    for (let i = 0; i < n; i++) expect(p.id(`10.${i}.0.0/16`)).toBe(i + 1);
    for (let i = 0; i < n; i += 997) expect(p.id(`10.${i}.0.0/16`)).toBe(i + 1);
    expect(p.count).toBe(n + 1);
    const { offsets, bytes } = p.encoded();
    const at = (id: number) => Buffer.from(bytes.subarray(offsets[id], offsets[id + 1])).toString();
    expect(at(1)).toBe('10.0.0.0/16');
    expect(at(n)).toBe(`10.${n - 1}.0.0/16`);
  });
});
