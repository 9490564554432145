/** Table tests: one fixture address per decision profile and what it must come out as. */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { DEFAULT_POLICY, assessRecord, type Action, type Band, type Verdict } from '../../src/scoring/index.ts';
import { PROFILE_FIXTURES } from './fixtures.ts';

interface Expected {
  usage_type: string;
  category: string | null;
  operator_type: string | null;
  threat_level: string;
  confidence: string;
  signals: string[];
  risk: number;
  band: Band;
  verdict: Verdict;
  role: string;
  action: Action;
  surfaces: Record<'content' | 'seo_crawler' | 'login' | 'signup' | 'payment' | 'api', Action>;
  guardrails: string[];
}

// Policy 2026-11.3 outcomes, reviewed by hand against docs/scoring.md. A policy
// change that moves one of these must bump policy_version and update this table.
const EXPECTED: Record<string, Expected> = {
  residential: {
    usage_type: 'isp', category: 'residential', operator_type: 'isp', threat_level: 'Low', confidence: 'medium',
    signals: [],
    risk: 10, band: 'good', verdict: 'allow', role: 'residential', action: 'allow',
    surfaces: { content: 'allow', seo_crawler: 'allow', login: 'allow', signup: 'allow', payment: 'allow', api: 'allow' },
    guardrails: [],
  },
  mobile_carrier: {
    usage_type: 'mobile', category: 'mobile', operator_type: 'mobile_isp', threat_level: 'Low', confidence: 'medium',
    signals: ['mobile_network'],
    risk: 10, band: 'good', verdict: 'allow', role: 'mobile', action: 'allow',
    surfaces: { content: 'allow', seo_crawler: 'allow', login: 'allow', signup: 'allow', payment: 'allow', api: 'allow' },
    guardrails: [],
  },
  ordinary_datacenter: {
    usage_type: 'hosting', category: 'hosting', operator_type: 'hosting', threat_level: 'Low', confidence: 'high',
    signals: ['datacenter_range'],
    risk: 25, band: 'fair', verdict: 'monitor', role: 'datacenter', action: 'monitor',
    surfaces: { content: 'allow', seo_crawler: 'monitor', login: 'monitor', signup: 'challenge', payment: 'challenge', api: 'monitor' },
    guardrails: [],
  },
  infrastructure_service: {
    usage_type: 'content_delivery', category: 'content', operator_type: 'content_delivery', threat_level: 'Low', confidence: 'high',
    signals: ['content_delivery_network'],
    risk: 15, band: 'good', verdict: 'allow', role: 'infrastructure', action: 'allow',
    surfaces: { content: 'allow', seo_crawler: 'allow', login: 'allow', signup: 'allow', payment: 'monitor', api: 'allow' },
    guardrails: [],
  },
  vpn_provider: {
    usage_type: 'vpn', category: 'vpn', operator_type: 'vpn_provider', threat_level: 'Low', confidence: 'high',
    signals: ['vpn_range','hosting_network'],
    risk: 43, band: 'fair', verdict: 'monitor', role: 'anonymizer', action: 'monitor',
    surfaces: { content: 'monitor', seo_crawler: 'monitor', login: 'challenge', signup: 'challenge', payment: 'manual_review', api: 'monitor' },
    guardrails: [],
  },
  open_proxy: {
    usage_type: 'proxy', category: 'proxy', operator_type: 'proxy_operator', threat_level: 'Medium', confidence: 'medium',
    signals: ['proxy_range','hosting_network'],
    risk: 48, band: 'poor', verdict: 'challenge', role: 'anonymizer', action: 'challenge',
    surfaces: { content: 'monitor', seo_crawler: 'monitor', login: 'challenge', signup: 'challenge', payment: 'manual_review', api: 'monitor' },
    guardrails: [],
  },
  tor_exit: {
    usage_type: 'tor', category: 'tor', operator_type: 'hosting', threat_level: 'Medium', confidence: 'high',
    signals: ['tor_exit','hosting_network'],
    risk: 63, band: 'poor', verdict: 'challenge', role: 'anonymizer', action: 'challenge',
    surfaces: { content: 'monitor', seo_crawler: 'monitor', login: 'challenge', signup: 'manual_review', payment: 'manual_review', api: 'monitor' },
    guardrails: [],
  },
  privacy_relay: {
    usage_type: 'privacy_relay', category: 'privacy_relay', operator_type: 'privacy_relay_operator', threat_level: 'Low', confidence: 'high',
    signals: ['privacy_relay_egress','content_delivery_network'],
    risk: 27, band: 'fair', verdict: 'monitor', role: 'privacy_relay', action: 'monitor',
    surfaces: { content: 'allow', seo_crawler: 'allow', login: 'monitor', signup: 'monitor', payment: 'monitor', api: 'monitor' },
    guardrails: ['privacy_relay_no_block'],
  },
  known_crawler_unverified: {
    usage_type: 'crawler', category: 'crawler', operator_type: 'crawler_operator', threat_level: 'Low', confidence: 'high',
    signals: ['datacenter_range','content_delivery_network','known_crawler_range'],
    risk: 15, band: 'good', verdict: 'allow', role: 'crawler', action: 'allow',
    surfaces: { content: 'allow', seo_crawler: 'allow', login: 'allow', signup: 'monitor', payment: 'monitor', api: 'allow' },
    guardrails: [],
  },
  verified_crawler: {
    usage_type: 'crawler', category: 'crawler', operator_type: 'crawler_operator', threat_level: 'Low', confidence: 'high',
    signals: ['datacenter_range','content_delivery_network','known_crawler_range','verified_crawler'],
    risk: 5, band: 'good', verdict: 'allow', role: 'crawler', action: 'allow',
    surfaces: { content: 'allow', seo_crawler: 'allow', login: 'allow', signup: 'allow', payment: 'allow', api: 'allow' },
    guardrails: ['verified_crawler_protection'],
  },
  threat_listed: {
    usage_type: 'unknown', category: null, operator_type: null, threat_level: 'High', confidence: 'low',
    signals: ['hijacked_netblock'],
    risk: 80, band: 'bad', verdict: 'block', role: 'threat', action: 'block',
    surfaces: { content: 'challenge', seo_crawler: 'challenge', login: 'block', signup: 'block', payment: 'block', api: 'block' },
    guardrails: ['threat_listed_step_up'],
  },
  bogon: {
    usage_type: 'reserved', category: 'reserved', operator_type: 'reserved', threat_level: 'Medium', confidence: 'high',
    signals: ['bogon_address'],
    risk: 70, band: 'bad', verdict: 'block', role: 'non_routable', action: 'block',
    surfaces: { content: 'block', seo_crawler: 'block', login: 'block', signup: 'block', payment: 'block', api: 'block' },
    guardrails: ['bogon_block'],
  },
  unknown: {
    usage_type: 'unknown', category: null, operator_type: null, threat_level: 'Low', confidence: 'low',
    signals: ['unrouted_address'],
    risk: 15, band: 'good', verdict: 'allow', role: 'unknown', action: 'allow',
    // api: the unrouted_address signal (+5) still tips it; signup and payment no longer punish missing evidence.
    surfaces: { content: 'allow', seo_crawler: 'allow', login: 'allow', signup: 'allow', payment: 'allow', api: 'monitor' },
    guardrails: [],
  },
};

describe('profile table (policy 2026-11.3)', () => {
  for (const [name, want] of Object.entries(EXPECTED)) {
    test(name, () => {
      const f = PROFILE_FIXTURES[name];
      const a = assessRecord(f.record, f.ctx, DEFAULT_POLICY);
      expect(a.decision.profile).toBe(name as typeof a.decision.profile);
      expect(a.decision.policy_version).toBe('2026-11.3');
      const got: Expected = {
        usage_type: a.classification.usage_type,
        category: a.network.category,
        operator_type: a.network.operator_type,
        threat_level: a.classification.threat_level,
        confidence: a.classification.confidence,
        signals: a.evidence.signals.map((s) => s.label),
        risk: a.score.risk_score,
        band: a.score.band,
        verdict: a.score.verdict,
        role: a.decision.role,
        action: a.decision.action,
        surfaces: Object.fromEntries(Object.entries(a.scenarios).map(([k, s]) => [k, s.action])) as Expected['surfaces'],
        guardrails: a.decision.guardrails_applied,
      };
      expect(got).toEqual(want);
    });
  }

  test('every profile of the policy has a fixture', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(Object.keys(DEFAULT_POLICY.profiles).sort());
  });
});
