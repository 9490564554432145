import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { MmdbDecoder, MmdbFormatError } from '../../index-builder/mmdb/decoder.ts';
import { encodeValue, Float } from './mmdb-writer.ts';

// Byte layouts follow the MaxMind DB File Format Specification 2.0, section "Output Data Section".
const decodeBytes = (bytes: number[], offset = 0) => new MmdbDecoder(new Uint8Array(bytes), 0).decode(offset);

describe('MMDB data section decoder', () => {
  test('round-trips the types the writer encodes', () => {
    const value = { s: 'Zürich', n: 70000, d: -27.4767, b: true, a: ['x', 1], m: { en: 'Paris' } };
    expect(decodeBytes(encodeValue(value))).toEqual(value);
    expect(decodeBytes(encodeValue(new Float(37.422)))).toBeCloseTo(37.422, 5);
  });

  test('pointers of every size, relative to the data section', () => {
    // Target string "hi" at offset 0; pointer forms after it.
    const target = [(2 << 5) | 2, 104, 105];
    expect(decodeBytes([...target, (1 << 5) | 0, 0], 3)).toBe('hi'); // ss=0: 11-bit
    const pad = new Array(2048).fill(0);
    const far = [...pad, ...target]; // target at 2048
    expect(decodeBytes([...far, (1 << 5) | (1 << 3), 0, 0], 2051)).toBe('hi'); // ss=1: +2048
    const farther = [...new Array(526336).fill(0), ...target]; // target at 526336
    expect(decodeBytes([...farther, (1 << 5) | (2 << 3), 0, 0, 0], 526339)).toBe('hi'); // ss=2: +526336
    expect(decodeBytes([...target, (1 << 5) | (3 << 3), 0, 0, 0, 0], 3)).toBe('hi'); // ss=3: 32-bit
  });

  test('extended types and long sizes', () => {
    // int32 -1 (extended type 8 = 7 + 1), uint64 2^63, boolean false, bytes.
    expect(decodeBytes([4, 1, 0xff, 0xff, 0xff, 0xff])).toBe(-1);
    expect(decodeBytes([8, 2, 0x80, 0, 0, 0, 0, 0, 0, 0])).toBe(2n ** 63n);
    expect(decodeBytes([0, 7])).toBe(false);
    expect(decodeBytes([(4 << 5) | 2, 1, 2])).toEqual(new Uint8Array([1, 2]));
    // A 300-byte string: size 30 means 285 + next two bytes.
    const long = 'x'.repeat(300);
    expect(decodeBytes([(2 << 5) | 30, 0, 15, ...Buffer.from(long)])).toBe(long);
    // A 40-byte string: size 29 means 29 + next byte.
    expect(decodeBytes([(2 << 5) | 29, 11, ...Buffer.from('y'.repeat(40))])).toBe('y'.repeat(40));
  });

  test('corrupt data gives MmdbFormatError, not a crash', () => {
    expect(() => decodeBytes([(2 << 5) | 10, 104])).toThrow(MmdbFormatError); // string past the end
    expect(() => decodeBytes([(1 << 5) | 0, 0])).toThrow('nested too deeply'); // pointer to itself
    expect(() => decodeBytes([0, 9])).toThrow('unknown data type 16'); // extended type 16
    expect(() => decodeBytes([(3 << 5) | 4, 0, 0, 0, 0])).toThrow('double of size 4');
    expect(() => decodeBytes([(7 << 5) | 1, (6 << 5) | 1, 5, 0])).toThrow('map key is not a string');
  });
});
