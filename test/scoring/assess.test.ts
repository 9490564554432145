/** assess(record, context): the one entry point of scoring, lazy part by part. */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import { DEFAULT_POLICY, assess, classify, collectEvidence, decide, networkContext, traceScore, type Policy } from '../../src/scoring/index.ts';
import { ctxArb, recordArb } from './arbitraries.ts';
import { baseRecord, NO_PROOF } from './fixtures.ts';

test('each part equals the steps run in order: classify, evidence, score, decide', () => {
  fc.assert(
    fc.property(recordArb, ctxArb, (r, scoring) => {
      const a = assess(r, { scoring, policy: DEFAULT_POLICY });
      const c = classify(r, scoring);
      const ev = collectEvidence(r, c, scoring.coverage);
      const trace = traceScore(ev, scoring.coverage);
      expect(a.classification).toEqual(c);
      expect(a.network).toEqual(networkContext(r, c));
      expect(a.evidence).toEqual(ev);
      expect(a.score).toEqual(trace.score);
      expect(a.decisions).toEqual(decide(r, c, ev, trace.score, DEFAULT_POLICY, undefined, scoring.coverage));
    }),
    { numRuns: 300 },
  );
});

test('parts are computed when read: classification, network and score never consult the policy', () => {
  // A policy any read of which throws: only the decisions may touch it.
  const untouchable = new Proxy({} as Policy, {
    get() {
      throw new Error('policy read');
    },
  });
  const a = assess(baseRecord(), { scoring: NO_PROOF, policy: untouchable });
  expect(a.classification.usage_type).toBeDefined();
  expect(a.network).toBeDefined();
  expect(a.score.risk_score).toBeGreaterThanOrEqual(0);
  expect(() => a.decisions).toThrow('policy read');
});

test('a part read twice is the same object (computed once)', () => {
  const a = assess(baseRecord(), { scoring: NO_PROOF, policy: DEFAULT_POLICY });
  expect(a.classification).toBe(a.classification);
  expect(a.evidence).toBe(a.evidence);
  expect(a.decisions).toBe(a.decisions);
});
