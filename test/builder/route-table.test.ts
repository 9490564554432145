import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { RouteTable } from '../../index-builder/merge/routed-prefixes.ts';

describe('RouteTable: routes as deduplicated typed rows', () => {
  test('equal routes share an id; any differing field makes a new one, in first-seen order', () => {
    const t = new RouteTable();
    const a = t.intern(4, 0x01020300, 24, [13335], false);
    expect(a).toBe(1);
    expect(t.intern(4, 0x01020300, 24, [13335], false)).toBe(a);
    expect(t.intern(4, 0x01020300, 23, [13335], false)).toBe(2);
    expect(t.intern(4, 0x01020300, 24, [13335, 64500], false)).toBe(3);
    expect(t.intern(4, 0x01020300, 24, [64500, 13335], false)).toBe(4);
    expect(t.intern(4, 0x01020300, 24, [13335, 64500], true)).toBe(5);
    // The same words in the other family are another route.
    expect(t.intern(6, 0x01020300n, 24, [13335], false)).toBe(6);
    expect(t.size).toBe(7);
  });

  test('reads back every field; an IPv6 start keeps all 128 bits', () => {
    const t = new RouteTable();
    const start = 0x2001_0db8_ffff_0000_0000_0000_0000_0000n;
    const id = t.intern(6, start, 48, [64500, 64501], true);
    expect(t.family(id)).toBe(6);
    expect(t.start(id)).toBe(start);
    expect(t.prefixLen(id)).toBe(48);
    expect(t.asSet(id)).toBe(true);
    expect(t.origins(id)).toEqual([64500, 64501]);
    const v4 = t.intern(4, 0xc0000200, 24, [4294967295], false);
    expect(t.start(v4)).toBe(0xc0000200);
    expect(t.origins(v4)).toEqual([4294967295]);
  });

  test('the announcing origin: the first of a route, none for an AS-set, an empty list or id 0', () => {
    const t = new RouteTable();
    expect(t.firstOrigin(t.intern(4, 0, 8, [7, 8], false))).toBe(7);
    expect(t.firstOrigin(t.intern(4, 0, 8, [7, 8], true))).toBeUndefined();
    expect(t.firstOrigin(t.intern(4, 0, 8, [], false))).toBeUndefined();
    expect(t.firstOrigin(0)).toBeUndefined();
  });

  test('interning after seal is refused', () => {
    const t = new RouteTable();
    t.intern(4, 0, 8, [1], false);
    t.seal();
    expect(() => t.intern(4, 0, 8, [2], false)).toThrow('after seal');
  });
});
