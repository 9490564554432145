/**
 * One serving snapshot per request (src/lookup/serving.ts): a lookup whose
 * crawler proof is awaited while /reload swaps the policy answers with the
 * policy it started with, and the next request with the new one. A new
 * snapshot (reload, policy, overrides, a source turning stale) comes with new
 * memos, never an answer made under the old one.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCrawlerVerifier, type CrawlerVerifier } from '../../src/crawlers/verifier.ts';
import { IndexHolder } from '../../src/index/holder.ts';
import { OverridesHolder } from '../../src/lookup/overrides/holder.ts';
import { ServingHolder } from '../../src/lookup/serving.ts';
import { buildV1 } from '../../src/lookup/v1.ts';
import { loadPolicy, type Policy } from '../../src/scoring/index.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';
import { startTestServer } from '../helpers/test-server.ts';

const ADMIN = 'a'.repeat(40);
let dir: string;
let indexPath: string;
let base: Policy;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ipintel-snapshot-'));
  indexPath = await fixtureIndexPath();
  base = await loadPolicy();
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const writePolicy = (path: string, version: string) => writeFileSync(path, JSON.stringify({ ...base, policy_version: version }));

describe('a request answers with the snapshot it started with', () => {
  test('a lookup waiting for its crawler proof while /reload swaps the policy answers under the old policy; the next one under the new', async () => {
    const policyPath = join(dir, 'policy.json');
    writePolicy(policyPath, '2099-01.1');
    // A verifier whose proofs wait until the test lets them go (no DNS is asked).
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let waiting = 0;
    const real = createCrawlerVerifier({ dnsServers: ['127.0.0.1:9'] });
    const crawlers: CrawlerVerifier = {
      ...real,
      proofFor: () => null,
      startProof: () => {
        waiting++;
        return gate.then(() => null);
      },
    };
    const server = await startTestServer(
      { IPINTEL_RATE_LIMITS: 'off', IPINTEL_ADMIN_TOKEN: ADMIN, IPINTEL_INDEX: indexPath },
      { policy: { current: await loadPolicy(policyPath), path: policyPath }, crawlers },
    );
    try {
      const pending = fetch(`${server.url}/v1/ip/8.8.8.8`);
      while (waiting === 0) await Bun.sleep(5);
      writePolicy(policyPath, '2099-01.2');
      const reload = await fetch(`${server.url}/reload`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
      expect(reload.status).toBe(200);
      expect(((await reload.json()) as { policy_version: string }).policy_version).toBe('2099-01.2');
      release();
      const started = await pending;
      expect(started.status).toBe(200);
      expect(((await started.json()) as { decision: { policy_version: string } }).decision.policy_version).toBe('2099-01.1');
      const next = await fetch(`${server.url}/v1/ip/8.8.8.8`);
      expect(((await next.json()) as { decision: { policy_version: string } }).decision.policy_version).toBe('2099-01.2');
    } finally {
      release();
      await server.stop();
    }
  }, 120_000);
});

describe('a new snapshot is a new memo', () => {
  const answer = { verifiedCrawler: null, rdapOwner: null, now: Date.parse('2026-11-22T00:00:00Z') };

  test('a policy change publishes a snapshot with its own memo; the old snapshot keeps its answers', async () => {
    const index = IndexHolder.open(indexPath);
    const serving = new ServingHolder(index, { current: base, path: null }, new OverridesHolder(null));
    const first = serving.snapshot;
    const hit = first.reader.lookup('8.8.8.8')!;
    expect(JSON.parse(first.bodies.body(hit, answer)).decision.policy_version).toBe(base.policy_version);
    expect(first.bodies.holds(hit)).toBe(true);
    serving.setPolicy({ ...base, policy_version: 'test-policy-2' });
    const second = serving.snapshot;
    expect(second).not.toBe(first);
    expect(second.bodies).not.toBe(first.bodies);
    expect(second.bodies.holds(hit)).toBe(false);
    expect(JSON.parse(second.bodies.body(hit, answer)).decision.policy_version).toBe('test-policy-2');
    expect(JSON.parse(first.bodies.body(hit, answer)).decision.policy_version).toBe(base.policy_version);
  });

  test('an index reload publishes a snapshot of the new reader, generation and coverage', () => {
    const index = IndexHolder.open(indexPath);
    const serving = new ServingHolder(index, { current: base, path: null }, new OverridesHolder(null));
    const first = serving.snapshot;
    index.reload();
    const second = serving.snapshot;
    expect(second.reader).toBe(index.current);
    expect(second.reader).not.toBe(first.reader);
    expect(second.generation).toBe(first.generation + 1);
    expect(second.coverage).toBe(index.coverage);
    // A hit of the new reader is not the old snapshot's to memoise.
    const hit = second.reader.lookup('8.8.8.8')!;
    first.bodies.body(hit, answer);
    expect(first.bodies.holds(hit)).toBe(false);
  });

  test('a source turning stale publishes a snapshot whose answers say so', () => {
    let now = Date.now();
    const index = IndexHolder.open(indexPath, () => now);
    const serving = new ServingHolder(index, { current: base, path: null }, new OverridesHolder(null));
    const first = serving.snapshot;
    const hit = first.reader.lookup('8.8.8.8')!;
    const before = first.bodies.body(hit, answer);
    now += 400 * 86_400_000; // every kind past its threshold
    index.refreshCoverage();
    const second = serving.snapshot;
    expect(second).not.toBe(first);
    expect(second.coverage.stale).not.toBe(0);
    const after = second.bodies.body(hit, answer);
    expect(after).toBe(JSON.stringify(buildV1(hit, { scoring: { verifiedCrawler: null, coverage: second.coverage }, policy: base, rdapOwner: null, now: answer.now }, null)));
    expect(after).not.toBe(before);
    // Nothing changed: no new snapshot.
    index.refreshCoverage();
    expect(serving.snapshot).toBe(second);
  });

  test('an applied overrides file publishes a snapshot with its table; a refused one does not', () => {
    const path = join(dir, 'overrides.csv');
    writeFileSync(path, 'cidr,org\n');
    const overrides = OverridesHolder.open(path, () => {});
    const serving = new ServingHolder(IndexHolder.open(indexPath), { current: base, path: null }, overrides);
    const first = serving.snapshot;
    writeFileSync(path, 'cidr,org\n8.8.8.0/24,Override Org\n');
    expect(overrides.reload().applied).toBe(true);
    const second = serving.snapshot;
    expect(second).not.toBe(first);
    expect(second.overridesGeneration).toBe(first.overridesGeneration + 1);
    expect(second.overrides.size).toBe(1);
    writeFileSync(path, 'nonsense,org\n8.8.8.0/24,Other\n'); // no cidr column: refused as a whole
    overrides.reload();
    expect(serving.snapshot).toBe(second);
  });
});
