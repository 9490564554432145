/** Invariants of scoring and the decision engine over random records. */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import {
  ACTIONS,
  DEFAULT_POLICY,
  SIGNALS,
  SURFACES,
  assessRecord,
  classify,
  collectEvidence,
  computeScore,
  decide,
  isSignalLabel,
  traceScore,
} from '../../src/scoring/index.ts';
import { actionsOf, chooseAction, compileSurface, lossOf, marginLevel, minLevel } from '../../src/scoring/decision/expected-loss.ts';
import { planDecision } from '../../src/scoring/decision/decide.ts';
import { ctxArb, recordArb } from './arbitraries.ts';

const RUNS = { numRuns: 2000 };
const isInt0to100 = (n: number) => Number.isInteger(n) && n >= 0 && n <= 100;

describe('score invariants', () => {
  test('ip_score + risk_score = 100, both integers in 0..100', () => {
    fc.assert(
      fc.property(recordArb, ctxArb, (r, ctx) => {
        const s = computeScore(collectEvidence(r, classify(r, ctx)));
        expect(s.ip_score + s.risk_score).toBe(100);
        expect(isInt0to100(s.risk_score)).toBe(true);
        expect(isInt0to100(s.ip_score)).toBe(true);
      }),
      RUNS,
    );
  });

  test('every signal is a registry entry, raised at most once, with the registry text', () => {
    fc.assert(
      fc.property(recordArb, ctxArb, (r, ctx) => {
        const { signals } = collectEvidence(r, classify(r, ctx));
        const labels = signals.map((s) => s.label);
        expect(new Set(labels).size).toBe(labels.length);
        for (const s of signals) {
          expect(isSignalLabel(s.label)).toBe(true);
          if (!isSignalLabel(s.label)) continue;
          const def = SIGNALS[s.label];
          expect(s).toEqual({ category: def.category, label: def.label, severity: def.severity, confidence: def.confidence, description: def.description });
        }
      }),
      RUNS,
    );
  });

  test('scoring is deterministic: the same record scores and decides the same', () => {
    fc.assert(
      fc.property(recordArb, ctxArb, (r, ctx) => {
        const copy = structuredClone(r);
        expect(assessRecord(copy, ctx, DEFAULT_POLICY)).toEqual(assessRecord(r, ctx, DEFAULT_POLICY));
      }),
      { numRuns: 300 },
    );
  });

  test('threat_feed appears exactly when the sidecar has the address, and adds no score', () => {
    fc.assert(
      fc.property(recordArb, ctxArb, (r, ctx) => {
        const ev = collectEvidence(r, classify(r, ctx));
        expect(ev.threat_feed !== undefined).toBe(r.threatFeed !== null);
        const without = collectEvidence({ ...r, threatFeed: null }, classify({ ...r, threatFeed: null }, ctx));
        expect(computeScore(ev)).toEqual(computeScore(without));
      }),
      RUNS,
    );
  });
});

describe('decision invariants', () => {
  test('decide never alters the score object and scores.risk_score mirrors it', () => {
    fc.assert(
      fc.property(recordArb, ctxArb, (r, ctx) => {
        const c = classify(r, ctx);
        const ev = collectEvidence(r, c);
        const score = computeScore(ev);
        const before = structuredClone(score);
        const d = decide(r, c, ev, score, DEFAULT_POLICY);
        expect(score).toEqual(before);
        expect(d.scores.risk_score).toBe(score.risk_score);
        for (const v of Object.values(d.scores)) expect(isInt0to100(v)).toBe(true);
      }),
      RUNS,
    );
  });

  test('a verified crawler is never challenged or blocked on content or seo_crawler', () => {
    const verified = ctxArb.filter((c) => c.verifiedCrawler !== null);
    fc.assert(
      fc.property(recordArb, verified, (r, ctx) => {
        const a = assessRecord(r, ctx, DEFAULT_POLICY);
        for (const s of ['content', 'seo_crawler'] as const) expect(['allow', 'monitor']).toContain(a.scenarios[s].action);
        expect(a.decision.guardrails_applied).toContain('verified_crawler_protection');
      }),
      RUNS,
    );
  });

  test('privacy relay egress is never blocked on any surface', () => {
    fc.assert(
      fc.property(recordArb, ctxArb, (r, ctx) => {
        const a = assessRecord(r, ctx, DEFAULT_POLICY);
        if (!a.classification.is_privacy_relay || a.decision.profile === 'bogon') return;
        expect(a.decision.action).not.toBe('block');
        for (const s of SURFACES) expect(a.scenarios[s].action).not.toBe('block');
      }),
      RUNS,
    );
  });

  test('explanation drivers sum to risk_score - base_risk_score', () => {
    fc.assert(
      fc.property(recordArb, ctxArb, (r, ctx) => {
        const a = assessRecord(r, ctx, DEFAULT_POLICY);
        const sum = a.explanation.drivers.reduce((t, d) => t + d.impact_score, 0);
        expect(sum).toBe(a.scores.risk_score - a.scores.base_risk_score);
        for (const d of a.explanation.drivers) {
          expect(d.impact).toBe(d.impact_score < 0 ? String(d.impact_score) : `+${d.impact_score}`);
          expect(d.direction).toBe(d.impact_score > 0 ? 'raises_risk' : d.impact_score < 0 ? 'lowers_risk' : 'neutral');
        }
      }),
      RUNS,
    );
  });

  test('each scenario confidence is min(its own margin level, evidence quality level), not decision.confidence', () => {
    let differing = 0;
    fc.assert(
      fc.property(recordArb, ctxArb, (r, ctx) => {
        const c = classify(r, ctx);
        const ev = collectEvidence(r, c);
        const score = computeScore(ev);
        const plan = planDecision(r, c, ev, score, DEFAULT_POLICY);
        const d = decide(r, c, ev, score, DEFAULT_POLICY);
        const generalLevel = marginLevel(plan.general.choice, DEFAULT_POLICY.confidence);
        for (const s of SURFACES) {
          const own = marginLevel(plan.surfaces[s].choice, DEFAULT_POLICY.confidence);
          expect(d.scenarios[s].confidence).toBe(minLevel(own, plan.quality));
          if (own === 'low') expect(d.scenarios[s].confidence).toBe('low');
          // With complete evidence and a sure classification, only the margins separate the two.
          if (plan.quality === 'high' && c.confidence === 'high' && own !== generalLevel) {
            expect(d.scenarios[s].confidence).not.toBe(d.decision.confidence);
            differing++;
          }
        }
      }),
      { numRuns: 1000 },
    );
    expect(differing).toBeGreaterThan(0);
  });

  test('the chosen action has the least expected loss and its margin sets the margin level', () => {
    const cs = compileSurface(DEFAULT_POLICY.surfaces.signup);
    const masks = fc.integer({ min: 1, max: cs.offered }).map((m) => m & cs.offered).filter((m) => m !== 0);
    fc.assert(
      fc.property(fc.double({ min: 0.005, max: 0.995, noNaN: true }), masks, (p, mask) => {
        const c = chooseAction(cs, p, mask);
        const permitted = actionsOf(mask);
        expect(permitted).toContain(c.action);
        const losses = permitted.map((a) => lossOf(cs, p, ACTIONS.indexOf(a)));
        expect(c.loss).toBe(Math.min(...losses));
        const others = losses.filter((_, i) => permitted[i] !== c.action);
        if (others.length === 0) {
          expect(c.runnerUp).toBeNull();
        } else {
          expect(c.runnerUp!.loss).toBe(Math.min(...others));
          expect(c.relativeMargin).toBeCloseTo((c.runnerUp!.loss - c.loss) / c.runnerUp!.loss, 12);
        }
        const rel = c.relativeMargin;
        const conf = DEFAULT_POLICY.confidence;
        expect(marginLevel(c, conf)).toBe(rel >= conf.margin_high ? 'high' : rel >= conf.margin_medium ? 'medium' : 'low');
      }),
      RUNS,
    );
  });

  test('traceScore effective contributions never exceed their weights in magnitude', () => {
    fc.assert(
      fc.property(recordArb, ctxArb, (r, ctx) => {
        const t = traceScore(collectEvidence(r, classify(r, ctx)));
        for (const c of t.contributions) {
          expect(Math.abs(c.effective)).toBeLessThanOrEqual(Math.abs(c.weight));
          if (c.effective !== 0) expect(Math.sign(c.effective)).toBe(Math.sign(c.weight));
        }
      }),
      RUNS,
    );
  });
});
