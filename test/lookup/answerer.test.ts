/**
 * The snapshot's answerer (src/lookup/answerer.ts) is where an answer's
 * live facts are asked for: a record its memo holds asks only the cached
 * proof (its row is not read to ask again), location alone asks nothing, the
 * one-line legacy text and a past assessment ask nothing, and an answer with nothing to wait for
 * is a string, not a promise. Driven without a server, through a verifier
 * that counts what it is asked.
 */
import { beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { LookupHit } from '../../src/index/record.ts';
import type { LiveSources } from '../../src/lookup/answerer.ts';
import { IndexHolder } from '../../src/index/holder.ts';
import { OverridesHolder } from '../../src/lookup/overrides/holder.ts';
import { lookupAddress } from '../../src/lookup/overrides/overlay.ts';
import { ServingHolder, type ServingSnapshot } from '../../src/lookup/serving.ts';
import { loadPolicy } from '../../src/scoring/index.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';

const NOW = Date.parse('2026-11-22T00:00:00Z');
let snapshot: ServingSnapshot;
beforeAll(async () => {
  const serving = new ServingHolder(IndexHolder.open(await fixtureIndexPath()), { current: await loadPolicy(), path: null }, new OverridesHolder(null));
  snapshot = serving.snapshot;
}, 300_000);

/** Live sources that count what they are asked (no DNS, no registry). */
function counting() {
  const asked = { cachedProof: 0, proof: 0, owner: 0, rdap: 0 };
  const live: LiveSources = {
    cachedProof: () => (asked.cachedProof++, null),
    proof: () => (asked.proof++, null),
    rdap: async () => (asked.rdap++, { available: false, network: null, contacts: [] }),
    rdapOwner: () => (asked.owner++, null),
    now: () => NOW,
  };
  return { asked, live };
}

const hitOf = (ip: string): LookupHit => lookupAddress(snapshot.reader, snapshot.overrides, ip)!;

describe('the answerer asks for the live facts an answer needs', () => {
  test('a record the memo holds asks the cached proof only; the first answer starts one', () => {
    const { asked, live } = counting();
    const hit = hitOf('8.8.8.8');
    const first = snapshot.answers.v1(hit, null, false, live);
    expect(typeof first).toBe('string');
    expect(asked).toMatchObject({ cachedProof: 0, proof: 1 });
    const again = snapshot.answers.v1(hitOf('8.8.8.8'), null, false, live);
    expect(again).toBe(first as string);
    expect(asked).toMatchObject({ cachedProof: 1, proof: 1 });
  });

  test('location alone asks no crawler proof', () => {
    const { asked, live } = counting();
    const body = snapshot.answers.v1(hitOf('1.1.1.1'), new Set(['ip', 'location']), false, live);
    expect(Object.keys(JSON.parse(body as string))).toEqual(['ip', 'location']);
    expect(asked).toMatchObject({ cachedProof: 0, proof: 0 });
  });

  test('the RDAP include asks the registry and waits for it', async () => {
    const { asked, live } = counting();
    const body = snapshot.answers.v1(hitOf('1.1.1.1'), new Set(['ip', 'rdap']), true, live);
    expect(body).toBeInstanceOf(Promise);
    expect(JSON.parse(await body)).toEqual({ ip: '1.1.1.1', rdap: { available: false, network: null, contacts: [] } });
    expect(asked.rdap).toBe(1);
  });

  test('the one-line legacy text asks nothing; the legacy JSON asks a proof and answers at once when none is awaited', () => {
    const { asked, live } = counting();
    const line = snapshot.answers.legacy(hitOf('8.8.8.8'), { text: true, detail: false, current: false }, live);
    expect(line).toStartWith('8.8.8.8\t');
    expect(asked).toMatchObject({ cachedProof: 0, proof: 0 });
    const json = snapshot.answers.legacy(hitOf('8.8.8.8'), { text: false, detail: false, current: false }, live);
    expect(typeof json).toBe('string');
    expect(JSON.parse(json as string).ip).toBe('8.8.8.8');
    expect(asked.proof).toBe(1);
  });

  test("an assessment's stack asks a proof when live, none as of a past moment", () => {
    const { asked, live } = counting();
    const now = snapshot.answers.assessment(hitOf('8.8.8.8'), live);
    expect(asked.proof).toBe(1);
    const past = snapshot.answers.assessment(hitOf('8.8.8.8'), null);
    expect(asked.proof).toBe(1);
    expect(past).toEqual(now);
  });
});
