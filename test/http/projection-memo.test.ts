/**
 * The projection memo gives what parseProjection gives (the projection, or
 * the same refusal) for any query values and tier, however many different
 * ones one memo has seen: its keys never mix two queries up.
 */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import { ProjectionMemo } from '../../src/http/projection-memo.ts';
import { parseProjection } from '../../src/lookup/projection.ts';
import { V1_FIELDS } from '../../src/lookup/v1.ts';

const outcome = (f: () => unknown) => {
  try {
    return { ok: f() };
  } catch (e) {
    return { refused: e };
  }
};

test('equal to parsing afresh, for generated values through one memo', () => {
  const memo = new ProjectionMemo();
  const piece = fc.oneof(fc.constantFrom(...V1_FIELDS, 'rdap', 'rdap_contacts', '', ' ', ',', ':', '-', 'ip,', ':ip'), fc.string({ maxLength: 4 }));
  const values = fc.option(fc.array(fc.array(piece, { maxLength: 3 }).map((p) => p.join('')), { minLength: 1, maxLength: 3 }), { nil: undefined });
  fc.assert(
    fc.property(values, values, fc.constantFrom('anonymous', 'free', 'pro') as fc.Arbitrary<'anonymous' | 'free' | 'pro'>, (fields, include, tier) => {
      const fresh = outcome(() => parseProjection({ fields, include }, tier));
      // Twice: the second is the memo's kept answer when the first was accepted.
      expect(outcome(() => memo.of(fields, include, tier))).toEqual(fresh);
      expect(outcome(() => memo.of(fields, include, tier))).toEqual(fresh);
    }),
    { numRuns: 5000, seed: 11 },
  );
});

test('by URL: equal to parsing the query afresh, for generated queries and tiers through one memo (the last query kept per tier)', () => {
  const memo = new ProjectionMemo();
  const names: readonly [string, string] = ['fields', 'include'];
  const value = fc.array(fc.constantFrom(...V1_FIELDS, 'rdap', 'rdap_contacts', '', 'bogus'), { maxLength: 3 }).map((p) => p.join(','));
  const param = fc.tuple(fc.constantFrom('fields', 'include', 'other'), value).map(([k, v]) => `${k}=${v}`);
  const query = fc.array(param, { minLength: 1, maxLength: 3 }).map((ps) => `http://h/v1/ip/1.1.1.1?${ps.join('&')}`);
  const tier = fc.constantFrom('anonymous', 'free', 'pro') as fc.Arbitrary<'anonymous' | 'free' | 'pro'>;
  fc.assert(
    fc.property(query, tier, tier, (url, t1, t2) => {
      const params = new URL(url).searchParams;
      const given = (k: string) => (params.has(k) ? params.getAll(k) : undefined);
      // Twice per tier (the second is the kept answer when the first was accepted), then the same URL for another tier.
      for (const t of [t1, t2]) {
        const fresh = outcome(() => parseProjection({ fields: given('fields'), include: given('include') }, t));
        expect(outcome(() => memo.ofUrl(url, names, t))).toEqual(fresh);
        expect(outcome(() => memo.ofUrl(url, names, t))).toEqual(fresh);
      }
    }),
    { numRuns: 3000, seed: 12 },
  );
});

test('by URL: a URL without a query is the projection of no parameters, not of its path\'s last character', () => {
  const memo = new ProjectionMemo();
  const names: readonly [string, string] = ['fields', 'include'];
  expect(memo.ofUrl('http://h/v1/ip/1.1.1.1?fields=ip', names, 'free')).toEqual(parseProjection({ fields: ['ip'] }, 'free'));
  expect(memo.ofUrl('http://h/v1/ip/1.1.1.1', names, 'free')).toEqual(parseProjection({}, 'free'));
  expect(memo.ofUrl('http://h/v1/ip/1.1.1.p', names, 'free')).toEqual(parseProjection({}, 'free'));
});

test('lastOf: the last kept projection for the same query text and tier only; a past answer\'s query is never kept', () => {
  const memo = new ProjectionMemo();
  const names: readonly [string, string] = ['fields', 'include'];
  expect(memo.lastOf('http://h/v1/ip/1.1.1.1?fields=ip', 'free')).toBeNull();
  const kept = memo.ofUrl('http://h/v1/ip/1.1.1.1?fields=ip', names, 'free');
  // Another address, the same query: the same projection object, without a parse.
  expect(memo.lastOf('http://h/v1/ip/9.9.9.9?fields=ip', 'free')).toBe(kept);
  expect(memo.lastOf('http://h/v1/ip/9.9.9.9?fields=ip', 'pro')).toBeNull();
  expect(memo.lastOf('http://h/v1/ip/9.9.9.9?fields=ipx', 'free')).toBeNull();
  expect(memo.lastOf('http://h/v1/ip/9.9.9.9?xfields=ip', 'free')).toBeNull();
  expect(memo.lastOf('http://h/v1/ip/9.9.9.9', 'free')).toBeNull();
  // The same text after an earlier `?` is another query ("?a?fields=ip"), not the kept one.
  expect(memo.lastOf('http://h/v1/ip/9.9.9.9?a?fields=ip', 'free')).toBeNull();
  // Parsed but not kept as the last (a past answer's query): the kept one stays.
  expect(memo.ofUrl('http://h/v1/ip/1.1.1.1?fields=ip&at=2026-01-01', names, 'free', false)).toEqual(parseProjection({ fields: ['ip'] }, 'free'));
  expect(memo.lastOf('http://h/v1/ip/1.1.1.1?fields=ip&at=2026-01-01', 'free')).toBeNull();
  expect(memo.lastOf('http://h/v1/ip/1.1.1.1?fields=ip', 'free')).toBe(kept);
});
