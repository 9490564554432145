/**
 * Usage from the network type an operator declares (PeeringDB), and the
 * decision for an address no evidence describes: not called residential, not
 * punished for what the index does not know.
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { Flag, type NetworkType } from '../../src/index/record.ts';
import { DEFAULT_POLICY, assessRecord } from '../../src/scoring/index.ts';
import { baseRecord, NO_PROOF } from './fixtures.ts';

// The documented mapping (docs/scoring.md, "Network type"): usage, confidence, category, operator_type, profile.
const MAPPING: Array<[NetworkType, string, string, string, string, string]> = [
  ['cable_dsl_isp', 'isp', 'medium', 'residential', 'isp', 'residential'],
  ['nsp', 'network_service', 'low', 'network_service_provider', 'network_service_provider', 'unknown'],
  ['content', 'content_delivery', 'medium', 'content', 'content_delivery', 'infrastructure_service'],
  ['enterprise', 'business', 'medium', 'business', 'business', 'unknown'],
  ['educational_research', 'education', 'medium', 'education', 'education', 'unknown'],
  ['government', 'government', 'medium', 'government', 'government', 'unknown'],
  ['non_profit', 'non_profit', 'medium', 'non_profit', 'non_profit', 'unknown'],
  ['route_server', 'network_service', 'medium', 'network_service_provider', 'network_service_provider', 'infrastructure_service'],
  ['network_services', 'network_service', 'medium', 'network_service_provider', 'network_service_provider', 'infrastructure_service'],
  ['route_collector', 'network_service', 'medium', 'network_service_provider', 'network_service_provider', 'infrastructure_service'],
];

describe('network type → usage', () => {
  test.each(MAPPING)('%s → usage %s (%s), category %s, operator_type %s, profile %s', (type, usage, confidence, category, operatorType, profile) => {
    const a = assessRecord(baseRecord({ networkType: type }), NO_PROOF, DEFAULT_POLICY);
    expect(a.classification).toMatchObject({ usage_type: usage, confidence });
    expect(a.network).toMatchObject({ category, operator_type: operatorType });
    expect(a.decision.profile).toBe(profile as typeof a.decision.profile);
    // A declared type raises no signal and no risk: it describes, it does not accuse.
    expect(a.evidence.signals).toEqual([]);
    expect(a.score.risk_score).toBe(10);
  });

  test('range lists and ASN lists speak before the declared type', () => {
    const cases: Array<[number, string]> = [
      [Flag.VPN, 'vpn'],
      [Flag.PRIVACY_RELAY, 'privacy_relay'],
      [Flag.CRAWLER_RANGE, 'crawler'],
      [Flag.DATACENTER, 'hosting'],
      [Flag.CONTENT, 'content_delivery'],
      [Flag.MOBILE, 'mobile'],
      [Flag.DATACENTER_ASN, 'hosting'],
      [Flag.VPN_ASN, 'vpn'],
    ];
    for (const [flags, usage] of cases) {
      const a = assessRecord(baseRecord({ flags, networkType: 'cable_dsl_isp' }), NO_PROOF, DEFAULT_POLICY);
      expect({ flags, usage: a.classification.usage_type as string | null }).toEqual({ flags, usage });
      expect(a.decision.profile).not.toBe('residential');
    }
  });
});

describe('no network-type evidence', () => {
  test('a routed, allocated, geolocated address on no list: usage null, nothing residential', () => {
    const a = assessRecord(baseRecord(), NO_PROOF, DEFAULT_POLICY);
    expect(a.classification).toMatchObject({ usage_type: 'unknown', confidence: 'low' });
    expect(a.network).toMatchObject({ category: null, operator_type: null });
    expect(a.decision).toMatchObject({ profile: 'unknown', action: 'allow', risk_level: 'low', confidence: 'low' });
    expect(Object.values(a.scenarios).map((s) => s.action)).toEqual(['allow', 'allow', 'allow', 'allow', 'allow', 'allow']);
  });

  test('the embedded default (ASN and location, no routing, no types): allowed with low confidence and an honest reason', () => {
    // An ordinary ISP address as the embedded default index holds it.
    const thin = baseRecord({ route: null, allocation: null });
    const a = assessRecord(thin, NO_PROOF, DEFAULT_POLICY);
    expect(a.decision).toMatchObject({ profile: 'unknown', action: 'allow', risk_level: 'low', confidence: 'low' });
    expect(a.decision.allowed_actions).toContain('allow');
    // The missing type costs no trust: the same as an address its operator declares an access ISP.
    expect(a.scores.trust_score).toBe(DEFAULT_POLICY.profiles.residential.trust);
    expect(a.explanation.reason_chain.join('\n')).toContain('no network-type evidence');
    for (const surface of ['content', 'seo_crawler', 'login', 'signup', 'payment'] as const) {
      expect({ surface, action: a.scenarios[surface].action }).toEqual({ surface, action: 'allow' });
    }
  });
});
