/**
 * A `fields` projection cut from the whole body's text (v1-projected-text.ts)
 * equals the projection built and serialized afresh, for random addresses
 * of both families and random field sets; and the contract keeps the
 * property the cut relies on: every nested object closed, no nested
 * property named like a top-level field.
 */
import { beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { TSchema } from '@sinclair/typebox';
import { V1Object } from '../../src/contract/v1.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { v1BodyText } from '../../src/lookup/v1-body.ts';
import { LEAD_FIELDS, projectV1Lead, projectV1Text } from '../../src/lookup/v1-projected-text.ts';
import { buildV1, V1_FIELDS, type V1Context } from '../../src/lookup/v1.ts';
import { FULL_COVERAGE, loadPolicy, type Policy } from '../../src/scoring/index.ts';
import { answerOf, memoOf } from '../helpers/v1-memo.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';
import { prng } from '../helpers/prng.ts';

let reader: IndexReader;
let policy: Policy;
beforeAll(async () => {
  reader = IndexReader.open(await fixtureIndexPath());
  policy = await loadPolicy();
}, 120_000);

/** Property names below a schema, and the paths of objects open to any name. */
function nestedNames(schema: unknown, path: string, names: Set<string>, open: string[]): void {
  if (schema === null || typeof schema !== 'object') return;
  const s = schema as Record<string, unknown>;
  if (s.properties) for (const [k, v] of Object.entries(s.properties as Record<string, unknown>)) (names.add(k), nestedNames(v, `${path}.${k}`, names, open));
  if (s.additionalProperties !== undefined && s.additionalProperties !== false) open.push(path);
  if (s.patternProperties !== undefined) open.push(path);
  for (const k of ['items', 'anyOf', 'oneOf', 'allOf']) {
    const v = s[k];
    if (Array.isArray(v)) for (const x of v) nestedNames(x, path, names, open);
    else if (v !== undefined) nestedNames(v, path, names, open);
  }
}

test('the contract: nested objects closed, no nested property named like a top-level field', () => {
  const top = new Set<string>(V1_FIELDS);
  const properties = (V1Object as TSchema & { properties: Record<string, unknown> }).properties;
  for (const field of V1_FIELDS) {
    const names = new Set<string>();
    const open: string[] = [];
    nestedNames(properties[field], field, names, open);
    expect({ field, open, clashes: [...names].filter((n) => top.has(n)) }).toEqual({ field, open: [], clashes: [] });
  }
});

test('cut from the memoised whole body: equal to the built projection, random addresses and field sets', () => {
  const ctx: V1Context = { scoring: { verifiedCrawler: null, coverage: FULL_COVERAGE }, policy, rdapOwner: null, now: Date.parse('2026-11-22T00:00:00Z') };
  const cache = memoOf(reader, ctx);
  const rnd = prng(31);
  const byte = () => Math.floor(rnd() * 256);
  const hex = () => Math.floor(rnd() * 65536).toString(16);
  let cut = 0;
  for (let i = 0; i < 3000; i++) {
    const ip = i % 5 === 4 ? `2${Math.floor(rnd() * 4)}${hex().padStart(2, '0').slice(0, 2)}:${hex()}::${hex()}` : `${1 + Math.floor(rnd() * 223)}.${byte()}.${byte()}.${byte()}`;
    const hit = reader.lookup(ip)!;
    const fields = new Set<string>(V1_FIELDS.filter(() => rnd() < 0.35));
    if (fields.size === 0) fields.add(V1_FIELDS[Math.floor(rnd() * V1_FIELDS.length)]);
    const want = JSON.stringify(buildV1(hit, ctx, fields));
    expect({ ip, fields: [...fields], text: v1BodyText(cache, hit, answerOf(ctx), fields) }).toEqual({ ip, fields: [...fields], text: want });
    // Half the sets are cut from the whole body, the others built (they need no scoring).
    if ([...fields].some((f) => !['ip', 'stack', 'location', 'routing'].includes(f))) cut++;
    expect(projectV1Text(JSON.stringify(buildV1(hit, ctx, null)), fields)).toBe(want);
  }
  expect(cut).toBeGreaterThan(1000);
});

test('fields before the scored part are cut from the body\'s lead alone: every subset with network, with and without a crawler proof', () => {
  const ctx: V1Context = { scoring: { verifiedCrawler: null, coverage: FULL_COVERAGE }, policy, rdapOwner: null, now: Date.parse('2026-11-22T00:00:00Z') };
  const proven: V1Context = { ...ctx, scoring: { ...ctx.scoring, verifiedCrawler: { key: 'googlebot', hostname: 'crawl-66-249-66-1.googlebot.com', verifiedBy: 'reverse_forward_dns' } as never } };
  const lead = [...LEAD_FIELDS];
  expect(lead).toEqual(['ip', 'stack', 'location', 'network', 'routing']);
  const others = lead.filter((f) => f !== 'network');
  const rnd = prng(7);
  const byte = () => Math.floor(rnd() * 256);
  for (let i = 0; i < 400; i++) {
    const ip = `${1 + Math.floor(rnd() * 223)}.${byte()}.${byte()}.${byte()}`;
    const hit = reader.lookup(ip)!;
    // network is scored: without it the set is built, not cut.
    const fields = new Set<string>(['network', ...others.filter((_, k) => (i >> k) & 1)]);
    for (const c of i % 8 === 7 ? [ctx, proven] : [ctx]) {
      const want = JSON.stringify(buildV1(hit, c, fields));
      // Asked twice of one memo: made on the first, read from its slot on the second.
      const memo = memoOf(reader, c, 64);
      for (let k = 0; k < 2; k++) expect({ ip, k, fields: [...fields], text: v1BodyText(memo, hit, answerOf(c), fields) }).toEqual({ ip, k, fields: [...fields], text: want });
      const whole = JSON.stringify(buildV1(hit, c, null));
      const own = whole.indexOf(',"location":') + 1;
      expect(projectV1Lead(hit.ip, 'ipv4', whole.slice(own, whole.indexOf(',"score":')), fields)).toBe(want);
    }
  }
  // A set reaching past the lead is refused by the lead's cut, never answered short.
  const hit = reader.lookup('8.8.8.8')!;
  const whole = JSON.stringify(buildV1(hit, ctx, null));
  const own = whole.indexOf(',"location":') + 1;
  expect(() => projectV1Lead(hit.ip, 'ipv4', whole.slice(own, whole.indexOf(',"score":')), new Set(['ip', 'score']))).toThrow();
  // A name the body does not hold is refused too, never dropped.
  expect(() => projectV1Lead(hit.ip, 'ipv4', whole.slice(own, whole.indexOf(',"score":')), new Set(['ip', 'rdap']))).toThrow();
  // An IPv6 address's lead, its memo slot read on the second ask.
  const six = reader.lookup('2001:4860:4860::8888')!;
  const memo = memoOf(reader, ctx, 64);
  for (const fields of [new Set(['ip', 'stack', 'network']), new Set(['location', 'network', 'routing', 'stack'])]) {
    const want = JSON.stringify(buildV1(six, ctx, fields));
    for (let k = 0; k < 2; k++) expect(v1BodyText(memo, six, answerOf(ctx), fields)).toBe(want);
  }
});

test('the lead cut finds routing whether it fits the searched tail or is longer', () => {
  // network longer than the tail searched first (v1-projected-text.ts), routing shorter, then longer.
  const network = `{"asn":1,"org":"A, \\"routing\\": B","owner":"${'x'.repeat(400)}"}`;
  for (const routing of ['{"prefix":"1.2.3.0/24"}', `{"prefix":"1.2.3.0/24","origin_asns":[${Array.from({ length: 80 }, (_, i) => 64_000 + i).join(',')}]}`]) {
    const own = `"location":null,"network":${network},"routing":${routing}`;
    expect(projectV1Lead('1.2.3.4', 'ipv4', own, new Set(['ip', 'location', 'network']))).toBe(`{"ip":"1.2.3.4","location":null,"network":${network}}`);
    expect(projectV1Lead('1.2.3.4', 'ipv4', own, new Set(['network', 'stack']))).toBe(`{"stack":"ipv4","network":${network}}`);
    expect(projectV1Lead('1.2.3.4', 'ipv4', own, new Set(['location', 'routing']))).toBe(`{"location":null,"routing":${routing}}`);
  }
});

test('a body that is not a whole v1 object is refused, not cut wrong', () => {
  expect(() => projectV1Text('{"ip":"1.1.1.1","stack":"ipv4"}', new Set(['stack']))).toThrow();
});
