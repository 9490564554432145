/**
 * The memoised answers are per serving snapshot, whose coverage is one of its
 * facts: a source turning stale (a new coverage, a new snapshot) gets a new
 * memo whose answers say so (test/http/serving-snapshot.test.ts publishes
 * one), and the old memo's answers stay those of the old coverage.
 */
import { beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { IndexReader } from '../../src/index/reader.ts';
import { buildV1 } from '../../src/lookup/v1.ts';
import { coverageOf, DEFAULT_POLICY, FULL_COVERAGE, type Coverage } from '../../src/scoring/index.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';
import { answerOf, memoOf } from '../helpers/v1-memo.ts';

let reader: IndexReader;
beforeAll(async () => {
  reader = IndexReader.open(await fixtureIndexPath());
}, 300_000);

/** The fixture's own META with the threat kind taken away. */
function withoutThreat(): Coverage {
  const meta = { ...reader.meta, capabilities: { ...reader.meta.capabilities, threat: false }, sources: reader.meta.sources.map((s) => ({ ...s, kinds: (s.kinds ?? []).filter((k) => k !== 'threat') })) };
  return coverageOf(meta, Date.now());
}

describe('memo per coverage', () => {
  test('the same record and index under another coverage is answered under that coverage', () => {
    const hit = reader.lookup('8.8.8.8')!;
    const ctx = (coverage: Coverage) => ({ scoring: { verifiedCrawler: null, coverage }, policy: DEFAULT_POLICY, rdapOwner: null, now: 0 });
    const fullMemo = memoOf(reader, ctx(FULL_COVERAGE));
    const full = JSON.parse(fullMemo.body(hit, answerOf(ctx(FULL_COVERAGE))));
    expect(full.classification.threat_level).toBe('Low');
    const thin = withoutThreat();
    const thinMemo = memoOf(reader, ctx(thin));
    const body = thinMemo.body(hit, answerOf(ctx(thin)));
    expect(JSON.parse(body).classification.threat_level).toBe('Unknown');
    expect(body).toBe(JSON.stringify(buildV1(hit, ctx(thin), null)));
    expect(thinMemo.body(hit, answerOf(ctx(thin)))).toBe(body);
    // And back: nothing of the thin answer is served under full coverage.
    expect(fullMemo.body(hit, answerOf(ctx(FULL_COVERAGE)))).toBe(JSON.stringify(buildV1(hit, ctx(FULL_COVERAGE), null)));
  });
});
