/** The v1 body memo lets go of a replaced index's entries as soon as the generation changes. */
import { beforeAll, expect, test } from 'bun:test';
import { IndexReader } from '../../src/index/reader.ts';
import { V1BodyCache } from '../../src/lookup/v1-body.ts';
import { DEFAULT_POLICY } from '../../src/scoring/index.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';

let reader: IndexReader;
beforeAll(async () => {
  reader = IndexReader.open(await fixtureIndexPath());
}, 120_000);

test('entries of an old generation are dropped when a new one is announced', () => {
  const memo = new V1BodyCache();
  const ctx = { scoring: { verifiedCrawler: null }, policy: DEFAULT_POLICY, rdapOwner: null, now: Date.parse('2026-11-22T00:00:00Z') };
  memo.useGeneration(1);
  const first = memo.body(reader.lookup('1.1.1.1')!, ctx);
  memo.body(reader.lookup('8.8.8.8')!, ctx);
  expect(memo.heldChars).toBeGreaterThan(0);
  memo.useGeneration(1); // same generation: kept
  expect(memo.heldChars).toBeGreaterThan(0);
  memo.useGeneration(2);
  expect(memo.heldChars).toBe(0);
  // And it still answers the same bytes afterwards.
  expect(memo.body(reader.lookup('1.1.1.1')!, ctx)).toBe(first);
});
