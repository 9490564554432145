/** IP text <-> numbers against ipaddr.js as a reference, plus CIDR helpers. */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import {
  embeddedIPv4,
  formatIPv4,
  formatIPv6,
  parseCidr,
  parseIp,
  parseIPv4,
  parseIPv4Range,
  parseIPv6,
  prefixRange,
  rangeToCidrs,
} from '../../src/net/ip.ts';

const v6FromIpaddr = (s: string): bigint => {
  const bytes = ipaddr.IPv6.parse(s).toByteArray();
  return bytes.reduce((acc, b) => (acc << 8n) | BigInt(b), 0n);
};

describe('IPv4', () => {
  test('round-trips every generated address and agrees with ipaddr.js', () => {
    fc.assert(
      fc.property(fc.ipV4(), (s) => {
        const v = parseIPv4(s);
        expect(v).toBe(ipaddr.IPv4.parse(s).toByteArray().reduce((a, b) => a * 256 + b, 0));
        expect(formatIPv4(v)).toBe(s);
      }),
      { numRuns: 2000 },
    );
  });

  test('rejects malformed text', () => {
    for (const bad of ['', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '1..2.3', '1.2.3.', '.1.2.3', ' 1.2.3.4', '1.2.3.4 ', '1.2.3.-4', '0x1.2.3.4', '1.2.3.4/8', '１.2.3.4']) {
      expect(parseIPv4(bad)).toBe(-1);
    }
    expect(parseIPv4('0.0.0.0')).toBe(0);
    expect(parseIPv4('255.255.255.255')).toBe(0xffffffff);
  });

  test('agrees with a strict reference on any text of digits and dots', () => {
    // Dotted quad of decimal octets 0-255 without leading zeros, and nothing else.
    const reference = (s: string) => {
      if (!/^(0|[1-9]\d{0,2})(\.(0|[1-9]\d{0,2})){3}$/.test(s)) return -1;
      const octets = s.split('.').map(Number);
      return octets.some((o) => o > 255) ? -1 : octets.reduce((a, b) => a * 256 + b, 0);
    };
    const text = fc.array(fc.constantFrom('0', '1', '2', '5', '9', '.', 'a', ':'), { maxLength: 17 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(text, (s) => {
        expect(parseIPv4(s)).toBe(reference(s));
        // The tail form (inside an IPv6 text) reads the same range.
        expect(parseIPv4Range(`::${s}`, 2, s.length + 2)).toBe(reference(s));
      }),
      { numRuns: 20000 },
    );
    for (const s of ['1.2.3.4', '10.0.0.255', '255.255.255.256', '1.2.3.04', '1.2.3.4.', '1.22.333.4', '100.200.250.255']) expect(parseIPv4(s)).toBe(reference(s));
  });
});

describe('IPv6', () => {
  test('parses like ipaddr.js and formats canonically (RFC 5952)', () => {
    fc.assert(
      fc.property(fc.ipV6(), (s) => {
        // ipaddr.js reads the IPv4-compatible form (::a.b.c.d, RFC 4291 2.5.5.1) as IPv4-mapped; we follow the RFC.
        fc.pre(!/^[0:]*:(\d{1,3}\.){3}\d{1,3}$/.test(s));
        const v = parseIPv6(s);
        expect(v).toBe(v6FromIpaddr(s));
        const canonical = formatIPv6(v!);
        expect(canonical).toBe(ipaddr.IPv6.parse(s).toRFC5952String());
        expect(parseIPv6(canonical)).toBe(v);
      }),
      { numRuns: 2000 },
    );
  });

  test('rejects malformed text', () => {
    for (const bad of [
      '', ':', ':::', '1::2::3', '1:2:3:4:5:6:7:8:9', '12345::', 'g::', 'fe80::1%eth0', '1:2:3:4:5:6:7:8::', '::1.2.3', '1:', ':1', '[::1]',
      ':::1', '1:::2', '1::2:', '::1:', '1:2:3:4:5:6:7:1.2.3.4', '1.2.3.4::', '::01.2.3.4', '::1.2.3.4:5', '::a.2.3.4', '1:2:3:4:5:6:7:8:1.2.3.4',
      '::ffff:1.2.3.256', '00000::', '::ª', '1:2:3:4:5:6:7', '::1 ', ' ::1',
    ]) {
      expect(parseIPv6(bad)).toBeNull();
    }
  });

  test('valid edge forms', () => {
    expect(parseIPv6('1:2:3:4:5:6:1.2.3.4')).toBe(0x00010002000300040005000601020304n);
    expect(parseIPv6('1::')).toBe(1n << 112n);
    expect(parseIPv6('::')).toBe(0n);
    expect(parseIPv6('1:2:3:4:5:6:7::')).toBe(0x0001000200030004000500060007_0000n);
    expect(parseIPv6('::2:3:4:5:6:7:8')).toBe(0x0000000200030004000500060007_0008n);
    expect(parseIPv6('ABCD:ef01::0')).toBe(0xabcdef01n << 96n);
  });

  test('mapped and compatible IPv4', () => {
    expect(parseIPv6('::1.2.3.4')).toBe(0x01020304n);
    expect(parseIPv6('::ffff:1.2.3.4')).toBe(0xffff01020304n);
    expect(embeddedIPv4(parseIPv6('::ffff:1.2.3.4')!)).toBe(parseIPv4('1.2.3.4'));
    expect(embeddedIPv4(parseIPv6('::1.2.3.4')!)).toBe(parseIPv4('1.2.3.4'));
    expect(embeddedIPv4(parseIPv6('::1')!)).toBe(-1);
    expect(embeddedIPv4(parseIPv6('2001:db8::1')!)).toBe(-1);
  });
});

describe('CIDR helpers', () => {
  test('parseCidr clears host bits and accepts bare addresses', () => {
    expect(parseCidr('10.1.2.3/8')).toMatchObject({ family: 4, start: parseIPv4('10.0.0.0'), end: parseIPv4('10.255.255.255'), len: 8 });
    expect(parseCidr('2001:db8::1/32')).toMatchObject({ family: 6, start: parseIPv6('2001:db8::'), len: 32 });
    expect(parseCidr('1.2.3.4')).toMatchObject({ len: 32 });
    expect(parseCidr('1.2.3.4/33')).toBeNull();
    expect(parseCidr('1.2.3.4/x')).toBeNull();
    expect(parseIp('nope')).toBeNull();
  });

  test('rangeToCidrs covers exactly the range with aligned prefixes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 1 << 20 }), (start, size) => {
        const end = Math.min(0xffffffff, start + size);
        const cidrs = rangeToCidrs(4, start, end);
        let next = start;
        for (const c of cidrs) {
          const r = prefixRange(4, c.start, c.len);
          expect(r.start).toBe(next);
          next = (r.end as number) + 1;
        }
        expect(next).toBe(end + 1);
      }),
      { numRuns: 500 },
    );
  });
});
