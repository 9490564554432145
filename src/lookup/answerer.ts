/**
 * The one answerer of a serving snapshot: given a request's facts (the hit
 * of its parsed address, its `fields`, whether the Pro RDAP include is
 * wanted, the legacy form), it returns the body to send, and decides inside
 * how: the whole memoised body, a lead cut or a text cut of it, or a fresh
 * build (v1BodyText), and whether a crawler proof or the RDAP registry must
 * be waited for. The HTTP layer gathers the facts and renders the answer
 * (status, headers); it never reads the memos.
 *
 * The live facts (crawler DNS proof, RDAP owner, the clock) are asked
 * through `LiveSources`, which the HTTP layer provides (it knows the crawler
 * verifier and the registry; this module imports neither), not handed in
 * ready-made: what to ask depends on the memo (a record it holds answered
 * without a proof to wait for, so its row need not be read to ask again) and
 * on the fields (location alone never waits for DNS), which only this module
 * knows.
 *
 * Each answer shape has one declaration and one entry here: the v1 object
 * (src/lookup/v1.ts, v1-body.ts), the flat legacy object or its text
 * (legacy.ts) and one address's part of the assessment (assessment.ts). The
 * legacy answer is not a projection of the v1 body (other members, other
 * order, `operator`/`domain` from scoring, a one-line text memo of its own),
 * so it has its own entry rather than a cut of the v1 text.
 */
import type { LookupHit } from '../index/record.ts';
import type { AssessContext, ScoringContext } from '../scoring/index.ts';
import { assessStack, type StackAssessment } from './assessment.ts';
import { legacyObject, legacyPlace, legacyText, type LegacyLines } from './legacy.ts';
import { needsScoring } from './v1.ts';
import { v1BodyText, type AnswerFacts, type V1BodyCache } from './v1-body.ts';

/** A crawler proven by DNS, as scoring reads it (null: none). */
export type VerifiedCrawler = ScoringContext['verifiedCrawler'];

/** Where an answer's live facts come from (one per set of services); `R`: the registry's answer. */
export interface LiveSources<R extends object = object> {
  /** The cached crawler proof of a hit's address; never asks DNS. */
  cachedProof(hit: LookupHit): VerifiedCrawler;
  /** The crawler proof of a GET lookup: a value when none must be awaited, else a promise bounded in time. */
  proof(hit: LookupHit): VerifiedCrawler | Promise<VerifiedCrawler>;
  /** The registry's answer for an address (the Pro include). */
  rdap(ip: string): Promise<R>;
  /** The owner an answer names: of `fetched` when given, else of a cached registry answer (null: none; never a person). */
  rdapOwner(hit: LookupHit, fetched: R | null): string | null;
  /** Clock (ms). */
  now(): number;
}

/** The legacy form asked for (spec 4.6): text or JSON, the detail text, the caller's own address. */
export interface LegacyForm {
  text: boolean;
  detail: boolean;
  current: boolean;
}

/** The answers of one serving snapshot, made with its memos. */
export class SnapshotAnswerer {
  constructor(
    private readonly bodies: V1BodyCache,
    private readonly lines: LegacyLines,
  ) {}

  /**
   * The v1 body (spec 2.1, 4.1) of a hit: the whole object when `fields` is
   * null, else those fields; with the registry's `rdap` object when `withRdap`
   * (an accepted include asking for it). Synchronous unless a crawler DNS
   * proof or the registry is awaited.
   */
  v1<R extends object>(hit: LookupHit, fields: ReadonlySet<string> | null, withRdap: boolean, live: LiveSources<R>): string | Promise<string> {
    if (withRdap) return this.v1WithRdap(hit, fields, live);
    // ip/stack/location/routing alone never wait for a crawler DNS proof.
    if (!needsScoring(fields)) return this.v1Text(hit, fields, null, null, live);
    const proof = this.proofOf(hit, live);
    if (proof instanceof Promise) return proof.then((p) => this.v1Text(hit, fields, p, null, live));
    return this.v1Text(hit, fields, proof, null, live);
  }

  /**
   * The v1 body with no live part (no crawler proof, no RDAP owner) as it was
   * or is at `now`: answers as of a past moment (the caller adds `as_of`)
   * and the offline `lookup` command.
   */
  v1WithoutLiveParts(hit: LookupHit, fields: ReadonlySet<string> | null, now: number): string {
    return v1BodyText(this.bodies, hit, { verifiedCrawler: null, rdapOwner: null, now }, fields, null);
  }

  /**
   * The legacy body (spec 4.6) of a hit: the one-line text, the detail text
   * or the flat JSON. The one-line text reads the record alone, so it neither
   * scores nor waits on a crawler's DNS proof; the others may wait for one.
   */
  legacy(hit: LookupHit, form: LegacyForm, live: LiveSources): string | Promise<string> {
    if (form.text && !form.detail) return form.current ? legacyText(legacyPlace(hit), false, true) : this.lines.line(hit);
    const proof = live.proof(hit);
    if (proof instanceof Promise) return proof.then((p) => this.legacyBody(hit, form, p, live));
    return this.legacyBody(hit, form, proof, live);
  }

  /** One address's part of the assessment (spec 4.2); `live` null: as of a past moment, with no live crawler proof (past-moment.ts, NOT_HISTORICAL). */
  assessment(hit: LookupHit, live: LiveSources | null): StackAssessment | Promise<StackAssessment> {
    if (live === null) return assessStack(hit, this.scoring(null));
    const proof = live.proof(hit);
    if (proof instanceof Promise) return proof.then((p) => assessStack(hit, this.scoring(p)));
    return assessStack(hit, this.scoring(proof));
  }

  private legacyBody(hit: LookupHit, form: LegacyForm, proof: VerifiedCrawler, live: LiveSources): string {
    const obj = legacyObject(hit, this.scoring(proof), live.now());
    return form.text ? legacyText(obj, form.detail, form.current) : JSON.stringify(obj);
  }

  /** Scoring's context under this snapshot (its coverage and policy) with a crawler proof. */
  private scoring(verifiedCrawler: VerifiedCrawler): AssessContext {
    const { coverage, policy } = this.bodies.facts;
    return { scoring: { verifiedCrawler, coverage }, policy };
  }

  /** The crawler proof of a hit (LiveSources.proof), without reading the row of a record the memo holds. */
  private proofOf(hit: LookupHit, live: LiveSources): VerifiedCrawler | Promise<VerifiedCrawler> {
    // A record the memo already answered wanted no DNS proof (only such records are memoised):
    // its row need not be read to ask again.
    return this.bodies.holds(hit) ? live.cachedProof(hit) : live.proof(hit);
  }

  /** An accepted include: the registry is asked before the body is built, so the answer's network.owner agrees with its rdap object. */
  private async v1WithRdap<R extends object>(hit: LookupHit, fields: ReadonlySet<string> | null, live: LiveSources<R>): Promise<string> {
    const proof = needsScoring(fields) ? await live.proof(hit) : null;
    return this.v1Text(hit, fields, proof, await live.rdap(hit.ip), live);
  }

  /** The v1 text once the live facts are in (v1BodyText chooses memo, cut or fresh build). */
  private v1Text<R extends object>(hit: LookupHit, fields: ReadonlySet<string> | null, proof: VerifiedCrawler, rdap: R | null, live: LiveSources<R>): string {
    return v1BodyText(this.bodies, hit, this.facts(hit, proof, rdap, live), fields, rdap);
  }

  /**
   * What an answer adds to its snapshot: the crawler proof, the RDAP owner
   * (of the answer this request fetched, the Pro include, else of a cached
   * one), the clock.
   */
  private facts<R extends object>(hit: LookupHit, verifiedCrawler: VerifiedCrawler, fetched: R | null, live: LiveSources<R>): AnswerFacts {
    return { verifiedCrawler, rdapOwner: live.rdapOwner(hit, fetched), now: live.now() };
  }
}
