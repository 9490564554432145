/**
 * Decision policy 2026-11.1 (the default before 2026-11.2). Pure data: change it only
 * with a new policy_version (see docs/scoring.md, "Changing the policy").
 */
import type { Policy } from './schema.ts';

/** Policy 2026-11.1 as data. */
export const POLICY_2026_11_1: Policy = {
  policy_version: '2026-11.1',
  profiles: {
    bogon: { role: 'non_routable', trust: 0, description: 'Non-routable address' },
    verified_crawler: { role: 'crawler', trust: 95, description: 'Verified crawler' },
    threat_listed: { role: 'threat', trust: 0, description: 'Threat-listed address' },
    tor_exit: { role: 'anonymizer', trust: 10, description: 'Tor exit' },
    vpn_provider: { role: 'anonymizer', trust: 30, description: 'VPN provider address' },
    open_proxy: { role: 'anonymizer', trust: 15, description: 'Proxy address' },
    privacy_relay: { role: 'privacy_relay', trust: 55, description: 'Privacy relay egress' },
    known_crawler_unverified: { role: 'crawler', trust: 70, description: 'Official crawler range, not DNS-verified' },
    infrastructure_service: { role: 'infrastructure', trust: 55, description: 'Service infrastructure address' },
    ordinary_datacenter: { role: 'datacenter', trust: 40, description: 'Ordinary datacenter address' },
    mobile_carrier: { role: 'mobile', trust: 60, description: 'Mobile carrier address' },
    residential: { role: 'residential', trust: 60, description: 'Residential ISP address' },
    unknown: { role: 'unknown', trust: 30, description: 'Address with little known context' },
  },
  risk_levels: { medium: 20, high: 45 },
  likelihood_levels: { medium: 0.15, high: 0.45 },
  likelihood_bounds: { min: 0.005, max: 0.995 },
  allowed_tolerance: 0.2,
  confidence: { margin_medium: 0.1, margin_high: 0.3, quality_medium: 40, quality_high: 70 },
  guardrails: {
    verified_crawler_protection: true,
    bogon_block: true,
    privacy_relay_no_block: true,
    threat_listed_step_up: true,
  },
  surfaces: {
    // decision.action: a surface-neutral reading driven by the risk score alone.
    general: {
      abuse_model: { bias: 0, risk: 1, abuse: 0, anonymity: 0, infrastructure: 0, routing: 0, trust: 0 },
      actions: {
        allow: { if_bad: 4, if_good: 0 },
        monitor: { if_bad: 3, if_good: 0.2 },
        challenge: { if_bad: 0.8, if_good: 2 },
        block: { if_bad: 0, if_good: 5 },
      },
    },
    // Reading public content: abuse costs little, friction costs reach.
    content: {
      abuse_model: { bias: 0.01, risk: 0.5, abuse: 0.5, anonymity: 0, infrastructure: 0, routing: 0.1, trust: -0.05 },
      actions: {
        allow: { if_bad: 2, if_good: 0 },
        monitor: { if_bad: 1.6, if_good: 0.1 },
        challenge: { if_bad: 0.6, if_good: 3 },
        block: { if_bad: 0, if_good: 8 },
      },
    },
    // Crawl access: blocking a real crawler costs search visibility; datacenter scrapers pose as crawlers.
    seo_crawler: {
      abuse_model: { bias: 0.02, risk: 0.6, abuse: 0.4, anonymity: 0, infrastructure: 0.15, routing: 0.1, trust: -0.1 },
      actions: {
        allow: { if_bad: 2, if_good: 0 },
        monitor: { if_bad: 1.6, if_good: 0.1 },
        challenge: { if_bad: 0.6, if_good: 4 },
        block: { if_bad: 0, if_good: 10 },
      },
    },
    // Account takeover is expensive; a challenge costs a legitimate user little.
    login: {
      abuse_model: { bias: 0.02, risk: 0.5, abuse: 0.4, anonymity: 0.1, infrastructure: 0.05, routing: 0.1, trust: -0.1 },
      actions: {
        allow: { if_bad: 10, if_good: 0 },
        monitor: { if_bad: 8, if_good: 0.2 },
        challenge: { if_bad: 2, if_good: 1.5 },
        block: { if_bad: 0, if_good: 8 },
      },
    },
    // Fake accounts: anonymity and hosting matter more; manual review is possible.
    signup: {
      abuse_model: { bias: 0.03, risk: 0.5, abuse: 0.4, anonymity: 0.25, infrastructure: 0.1, routing: 0.1, trust: -0.1 },
      actions: {
        allow: { if_bad: 12, if_good: 0 },
        monitor: { if_bad: 9, if_good: 0.3 },
        challenge: { if_bad: 3, if_good: 1.5 },
        manual_review: { if_bad: 1.5, if_good: 3 },
        block: { if_bad: 0, if_good: 8 },
      },
    },
    // Fraud losses dominate; review before blocking a paying customer.
    payment: {
      abuse_model: { bias: 0.02, risk: 0.5, abuse: 0.5, anonymity: 0.3, infrastructure: 0.1, routing: 0.1, trust: -0.1 },
      actions: {
        allow: { if_bad: 25, if_good: 0 },
        monitor: { if_bad: 20, if_good: 0.3 },
        challenge: { if_bad: 5, if_good: 2 },
        manual_review: { if_bad: 2, if_good: 4 },
        block: { if_bad: 0, if_good: 12 },
      },
    },
    // Programmatic clients run in datacenters and cannot solve challenges.
    api: {
      abuse_model: { bias: 0.02, risk: 0.6, abuse: 0.4, anonymity: 0.1, infrastructure: 0, routing: 0.1, trust: -0.05 },
      actions: {
        allow: { if_bad: 5, if_good: 0 },
        monitor: { if_bad: 4, if_good: 0.1 },
        challenge: { if_bad: 2, if_good: 3 },
        block: { if_bad: 0, if_good: 6 },
      },
    },
  },
};
