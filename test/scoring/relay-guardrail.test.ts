/**
 * Relay egress carries ordinary browser users: under the default policy no
 * scenario (nor the general action) on a privacy relay address goes above
 * `monitor`, whatever else the record says (privacy_relay_no_block).
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import { Flag } from '../../src/index/record.ts';
import { DEFAULT_POLICY, assessRecord, isNonRoutable } from '../../src/scoring/index.ts';
import { ctxArb, recordArb } from './arbitraries.ts';
import { PROFILE_FIXTURES } from './fixtures.ts';

const MILD = new Set(['allow', 'monitor']);

describe('privacy relay egress under the default policy', () => {
  test('the relay fixture: every scenario at monitor or below', () => {
    const f = PROFILE_FIXTURES.privacy_relay;
    const a = assessRecord(f.record, f.ctx, DEFAULT_POLICY);
    for (const [surface, s] of Object.entries(a.scenarios)) expect([surface, MILD.has(s.action)]).toEqual([surface, true]);
    expect(MILD.has(a.decision.action)).toBe(true);
    expect(a.decision.guardrails_applied).toContain('privacy_relay_no_block');
  });

  test('any routable relay record: no scenario above monitor', () => {
    fc.assert(
      fc.property(recordArb, ctxArb, (record, ctx) => {
        const relay = { ...record, flags: record.flags | Flag.PRIVACY_RELAY };
        fc.pre(!isNonRoutable(relay));
        const a = assessRecord(relay, ctx, DEFAULT_POLICY);
        for (const s of Object.values(a.scenarios)) expect(MILD.has(s.action)).toBe(true);
        expect(MILD.has(a.decision.action)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
