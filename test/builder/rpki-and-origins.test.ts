/** Build-time routing facts: RFC 6811 origin validation against VRPs, and MOAS origin conflicts. */
import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeCollected } from '../../index-builder/build.ts';
import { addBuiltins } from '../../index-builder/builtins.ts';
import { Collector } from '../../index-builder/merge/collector.ts';
import { validateRoute, VrpIndex } from '../../index-builder/merge/rpki.ts';
import type { VrpValue } from '../../index-builder/sink.ts';
import { parseCidr } from '../../src/net/ip.ts';
import { IndexReader } from '../../src/index/reader.ts';

/** A VRP from CIDR text. */
function vrp(cidr: string, asn: number, maxLength: number): VrpValue {
  const c = parseCidr(cidr)!;
  return { family: c.family, asn, start: c.start, end: c.end, prefixLen: c.len, maxLength };
}
/** validateRoute for a route given as CIDR text. */
function state(index: VrpIndex, cidr: string, origins: number[], asSet = false) {
  const c = parseCidr(cidr)!;
  return validateRoute(index, c.family, c.start, c.len, origins, asSet);
}

describe('RFC 6811 origin validation', () => {
  const vrps = new VrpIndex([
    vrp('192.0.2.0/24', 64500, 24),
    vrp('198.51.100.0/22', 64501, 24),
    vrp('203.0.113.0/24', 0, 24), // AS0: nobody may originate
    vrp('2001:db8::/32', 64502, 48),
  ]);

  test('valid: a covering VRP with the origin and a maxLength that allows the length', () => {
    expect(state(vrps, '192.0.2.0/24', [64500])).toBe('valid');
    expect(state(vrps, '198.51.101.0/24', [64501])).toBe('valid');
    expect(state(vrps, '2001:db8:1::/48', [64502])).toBe('valid');
  });

  test('invalid: wrong origin, too long for maxLength, AS0, or an AS-set', () => {
    expect(state(vrps, '192.0.2.0/24', [64999])).toBe('invalid');
    expect(state(vrps, '198.51.100.0/25', [64501])).toBe('invalid');
    expect(state(vrps, '2001:db8:1:1::/64', [64502])).toBe('invalid');
    expect(state(vrps, '203.0.113.0/24', [0])).toBe('invalid');
    expect(state(vrps, '192.0.2.0/24', [64500], true)).toBe('invalid');
  });

  test('not_found without a covering VRP; a less specific route is not covered by a more specific VRP', () => {
    expect(state(vrps, '8.8.8.0/24', [15169])).toBe('not_found');
    expect(state(vrps, '192.0.0.0/16', [64500])).toBe('not_found');
  });

  test('MOAS: valid when any origin is authorised', () => {
    expect(state(vrps, '192.0.2.0/24', [64999, 64500])).toBe('valid');
    expect(state(vrps, '192.0.2.0/24', [64999, 64998])).toBe('invalid');
  });

  test('unknown when the build has no VRPs at all', () => {
    expect(state(new VrpIndex([]), '192.0.2.0/24', [64500])).toBe('unknown');
  });
});

describe('through a build', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipintel-rpki-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('each route carries its RPKI state and MOAS conflict into the index', () => {
    const c = new Collector();
    addBuiltins(c);
    const route = (cidr: string, origins: number[], asSet = false) => {
      const p = parseCidr(cidr)!;
      c.route(p.family, p.start, p.end, { prefixLen: p.len, origins, asSet });
    };
    route('1.2.0.0/16', [64500]);
    route('1.2.3.0/24', [64501, 64502]); // MOAS inside the /16
    route('5.6.7.0/24', [64999]);
    c.vrp(vrp('1.2.0.0/16', 64500, 16));
    c.vrp(vrp('5.6.0.0/16', 64999, 20)); // /24 is longer than maxLength 20
    const out = join(dir, 'rpki.idx');
    writeCollected(c, [], { out, attributions: [] });
    const r = IndexReader.open(out);
    expect(r.meta.hasRpki).toBe(true);
    expect(r.lookup('1.2.4.4')!.record.route).toMatchObject({ prefix: '1.2.0.0/16', originAsn: 64500, rpkiStatus: 'valid', originConflict: false });
    expect(r.lookup('1.2.3.4')!.record.route).toMatchObject({ prefix: '1.2.3.0/24', origins: [64501, 64502], rpkiStatus: 'invalid', originConflict: true });
    expect(r.lookup('5.6.7.8')!.record.route).toMatchObject({ rpkiStatus: 'invalid', originConflict: false });
    expect(r.lookup('9.9.9.9')!.record.route).toBeNull();
  });
});
