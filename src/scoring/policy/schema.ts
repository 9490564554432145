/**
 * The decision policy's shape as a JSON schema (TypeBox), so a policy file
 * can be validated at start and on /reload, and the TypeScript type follows.
 */
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { PROFILES, SURFACES } from '../types.ts';

const Unit = Type.Number({ minimum: 0, maximum: 1 });
const Cost = Type.Number({ minimum: 0 });

/** Loss of one action: when the traffic is abusive, and when it is legitimate. */
const ActionCost = Type.Object({ if_bad: Cost, if_good: Cost }, { additionalProperties: false });

/**
 * Abuse likelihood on a surface: p = bias + Σ weight × sub-score / 100,
 * clamped to [p_min, p_max]. `trust` normally carries a negative weight.
 */
const AbuseModel = Type.Object(
  {
    bias: Type.Number({ minimum: -1, maximum: 1 }),
    risk: Type.Number({ minimum: -2, maximum: 2 }),
    abuse: Type.Number({ minimum: -2, maximum: 2 }),
    anonymity: Type.Number({ minimum: -2, maximum: 2 }),
    infrastructure: Type.Number({ minimum: -2, maximum: 2 }),
    routing: Type.Number({ minimum: -2, maximum: 2 }),
    trust: Type.Number({ minimum: -2, maximum: 2 }),
  },
  { additionalProperties: false },
);

const SurfacePolicy = Type.Object(
  {
    abuse_model: AbuseModel,
    actions: Type.Object(
      {
        allow: Type.Optional(ActionCost),
        monitor: Type.Optional(ActionCost),
        challenge: Type.Optional(ActionCost),
        manual_review: Type.Optional(ActionCost),
        block: Type.Optional(ActionCost),
      },
      { additionalProperties: false, minProperties: 1 },
    ),
  },
  { additionalProperties: false },
);

const ProfilePolicy = Type.Object(
  {
    role: Type.String({ minLength: 1 }),
    /** Baseline trust (0..100) of the profile: the trust_score sub-score. */
    trust: Type.Integer({ minimum: 0, maximum: 100 }),
    /** Short phrase for summaries, e.g. "Ordinary datacenter address". */
    description: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);

// The policy has one extra surface, `general`, behind decision.action.
const surfaceKeys = ['general', ...SURFACES] as const;
const guardrailKeys = ['verified_crawler_protection', 'bogon_block', 'privacy_relay_no_block', 'threat_listed_step_up'] as const;

/** An object schema with exactly these keys, each of schema `value`. */
function recordOf<K extends string, T extends TSchema>(keys: readonly K[], value: T): TObject<{ [P in K]: T }> {
  return Type.Object(Object.fromEntries(keys.map((k) => [k, value])) as { [P in K]: T }, { additionalProperties: false });
}

/** JSON schema of a policy file. */
export const PolicySchema = Type.Object(
  {
    /** Versioned label, e.g. "2026-11.1": year-month of the revision, then a counter. */
    policy_version: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}\\.[0-9]+$' }),
    profiles: recordOf(PROFILES, ProfilePolicy),
    /** decision.risk_level from risk_score: medium from `medium`, high from `high`. */
    risk_levels: Type.Object({ medium: Type.Integer({ minimum: 0, maximum: 100 }), high: Type.Integer({ minimum: 0, maximum: 100 }) }, { additionalProperties: false }),
    /** scenario risk_level from the surface's abuse likelihood. */
    likelihood_levels: Type.Object({ medium: Unit, high: Unit }, { additionalProperties: false }),
    likelihood_bounds: Type.Object({ min: Unit, max: Unit }, { additionalProperties: false }),
    /** Actions whose expected loss is within this fraction of the cost scale of the best count as allowed. */
    allowed_tolerance: Unit,
    confidence: Type.Object(
      {
        /** Relative expected-loss margin ((runner-up − best) / runner-up) for medium and high confidence. */
        margin_medium: Unit,
        margin_high: Unit,
        /** evidence_quality_score needed for medium and high confidence. */
        quality_medium: Type.Integer({ minimum: 0, maximum: 100 }),
        quality_high: Type.Integer({ minimum: 0, maximum: 100 }),
      },
      { additionalProperties: false },
    ),
    guardrails: recordOf(guardrailKeys, Type.Boolean()),
    surfaces: recordOf(surfaceKeys, SurfacePolicy),
  },
  { additionalProperties: false },
);

/** A decision policy. */
export type Policy = Static<typeof PolicySchema>;
export type SurfacePolicy = Static<typeof SurfacePolicy>;
export type GuardrailName = (typeof guardrailKeys)[number];
/** Names of the guardrails a policy can switch, in priority order. */
export const GUARDRAIL_NAMES: readonly GuardrailName[] = guardrailKeys;
