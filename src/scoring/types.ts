/**
 * Output shapes of the scoring layer, named exactly as spec 2.1 / 2.2 name
 * them (snake_case) so the HTTP projection can serialise them unchanged.
 * The public shapes are the declarations of src/contract/v1.ts (from which
 * /openapi.json is generated); the types here are derived from them.
 */
import type { Static } from '@sinclair/typebox';
import type * as V1 from '../contract/v1.ts';
import { ACTION_NAMES, PROFILE_NAMES, SURFACE_NAMES } from '../contract/v1.ts';
import type { Coverage } from './coverage.ts';

/** Caller-independent context of one lookup. */
export interface ScoringContext {
  /** Cached reverse+forward DNS proof for this address; null when none. */
  verifiedCrawler: { key: string; hostname: string } | null;
  /**
   * What the index answering holds (one object per index and moment, from
   * IndexHolder.coverage). Absent: every kind held and fresh (hand-made records).
   */
  coverage?: Coverage;
}

export type Level = Static<typeof V1.Level>;
export type Severity = Static<typeof V1.Severity>;
/** `Unknown`: the index holds no threat data and no other fact raises the level (docs/scoring.md). */
export type ThreatLevel = Static<typeof V1.ThreatLevel>;

/** Spec 2.1 classification object. */
export type Classification = Static<typeof V1.Classification>;

export type UsageType = Static<typeof V1.UsageType>;

export type ProxyType = Static<typeof V1.ProxyType>;

export type Trait = Static<typeof V1.Trait>;

/** The classification fields of spec 2.1 `network` computed here. */
export type NetworkContext = Pick<Static<typeof V1.Network>, 'category' | 'operator' | 'operator_type' | 'service_name'>;

export type NetworkCategory = Static<typeof V1.NetworkCategory>;

export type OperatorType = Static<typeof V1.OperatorType>;

/** One spec 2.1 evidence signal. */
export type Signal = Static<typeof V1.Signal>;

export type SignalCategory = Static<typeof V1.SignalCategory>;

/** Spec 2.1 evidence.threat_feed (sidecar metadata; adds no score). */
export type ThreatFeedEvidence = Static<typeof V1.ThreatFeed>;

type EvidenceBody = Static<typeof V1.Evidence>;
/** Spec 2.1 evidence; its kind lists are shared per coverage, hence read-only here. */
export type Evidence = Omit<EvidenceBody, 'unavailable' | 'stale'> & {
  unavailable?: Readonly<NonNullable<EvidenceBody['unavailable']>>;
  stale?: Readonly<NonNullable<EvidenceBody['stale']>>;
};

export type Band = Static<typeof V1.Band>;
export type Verdict = Static<typeof V1.Verdict>;
export type RecommendedAction = Static<typeof V1.RecommendedAction>;

/** Spec 2.1 score object. */
export type Score = Static<typeof V1.Score>;

/** How each signal moved the risk score (source of explanation drivers). */
export interface Contribution {
  label: string;
  /** The signal's nominal weight. */
  weight: number;
  /** The change it actually caused after category caps and the 0..100 clamp. */
  effective: number;
  /** The driver's reason when it is not the registry's description (an operator override's). */
  reason?: string;
}

/** computeScore's full result: the spec object plus the trace behind it. */
export interface ScoreTrace {
  score: Score;
  base_risk_score: number;
  contributions: Contribution[];
}

export type Surface = (typeof SURFACE_NAMES)[number];
/** The scenario surfaces of spec 2.2, in output order. */
export const SURFACES: readonly Surface[] = SURFACE_NAMES;

export type Action = Static<typeof V1.Action>;
/** Actions from most permissive to most restrictive. */
export const ACTIONS: readonly Action[] = ACTION_NAMES;

export type Profile = (typeof PROFILE_NAMES)[number];

/** Every decision profile. */
export const PROFILES: readonly Profile[] = PROFILE_NAMES;

/** Spec 2.2 decision object. */
export type Decision = Static<typeof V1.Decision>;

/** Spec 2.2 scores object (eight advisory sub-scores). */
export type SubScores = Static<typeof V1.SubScores>;

export type Scenario = Static<typeof V1.Scenario>;

export type Scenarios = Static<typeof V1.Scenarios>;

export type Driver = Static<typeof V1.Driver>;

export type Explanation = Static<typeof V1.Explanation>;

/** What decide() returns: the four additive objects of spec 2.2. */
export interface DecisionObjects {
  decision: Decision;
  scores: SubScores;
  scenarios: Scenarios;
  explanation: Explanation;
}

/** Everything scoring knows about one record. */
export interface Assessment extends DecisionObjects {
  classification: Classification;
  network: NetworkContext;
  evidence: Evidence;
  score: Score;
}
