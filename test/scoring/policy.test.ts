/** Loading and validating decision policies; the policy moves decisions, never the score. */
import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_POLICY, PolicyError, assessRecord, loadPolicy, validatePolicy, type Policy } from '../../src/scoring/index.ts';
import { PROFILE_FIXTURES } from './fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-policy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writePolicy(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
}

const clone = (): Policy => structuredClone(DEFAULT_POLICY);

describe('loadPolicy', () => {
  test('without a path it is the built-in policy, which validates', async () => {
    expect(await loadPolicy()).toBe(DEFAULT_POLICY);
    expect(validatePolicy(structuredClone(DEFAULT_POLICY))).toEqual(DEFAULT_POLICY);
  });

  test('a JSON file of the built-in policy loads equal to it', async () => {
    expect(await loadPolicy(writePolicy('same.json', DEFAULT_POLICY))).toEqual(DEFAULT_POLICY);
  });

  test('unparseable JSON is a PolicyError naming the file', async () => {
    const path = writePolicy('broken.json', '{ "policy_version": ');
    await expect(loadPolicy(path)).rejects.toBeInstanceOf(PolicyError);
    await expect(loadPolicy(path)).rejects.toThrow(path);
  });

  test('a missing file is a PolicyError', async () => {
    await expect(loadPolicy(join(dir, 'absent.json'))).rejects.toBeInstanceOf(PolicyError);
  });

  test('schema violations are listed with their paths', () => {
    const bad = clone() as unknown as Record<string, any>;
    bad.policy_version = 'latest';
    delete bad.surfaces.payment;
    bad.profiles.residential.trust = 140;
    try {
      validatePolicy(bad, 'bad.json');
      throw new Error('accepted an invalid policy');
    } catch (err) {
      expect(err).toBeInstanceOf(PolicyError);
      const problems = (err as PolicyError).problems.join('\n');
      expect(problems).toContain('/policy_version');
      expect(problems).toContain('/surfaces/payment');
      expect(problems).toContain('/profiles/residential/trust');
    }
  });

  test('unknown keys are rejected (a typo must not silently fall back)', () => {
    const bad = clone() as unknown as Record<string, any>;
    bad.guardrails.verified_crawler_protecton = true;
    expect(() => validatePolicy(bad)).toThrow(PolicyError);
  });

  test('relations between thresholds are checked', () => {
    const bad = clone();
    bad.risk_levels = { medium: 50, high: 40 };
    bad.confidence.margin_medium = 0.5;
    delete (bad.surfaces.content.actions as Record<string, unknown>).allow;
    try {
      validatePolicy(bad);
      throw new Error('accepted an invalid policy');
    } catch (err) {
      expect((err as PolicyError).problems).toEqual([
        '/risk_levels: medium must be below high',
        '/confidence: margin_medium must be below margin_high',
        '/surfaces/content/actions: must offer allow',
      ]);
    }
  });
});

describe('a policy changes decisions only', () => {
  test('a stricter payment policy moves the payment action but not score or other surfaces', async () => {
    const strict = clone();
    strict.policy_version = '2026-11.2';
    strict.surfaces.payment.actions.challenge = { if_bad: 5, if_good: 20 };
    strict.surfaces.payment.actions.manual_review = { if_bad: 2, if_good: 20 };
    strict.surfaces.payment.actions.block = { if_bad: 0, if_good: 0.5 };
    const policy = await loadPolicy(writePolicy('strict.json', strict));
    const f = PROFILE_FIXTURES.ordinary_datacenter;
    const before = assessRecord(f.record, f.ctx, DEFAULT_POLICY);
    const after = assessRecord(f.record, f.ctx, policy);
    expect(after.decision.policy_version).toBe('2026-11.2');
    expect(after.score).toEqual(before.score);
    expect(after.evidence).toEqual(before.evidence);
    expect(before.scenarios.payment.action).toBe('challenge');
    expect(after.scenarios.payment.action).toBe('block');
    expect(after.scenarios.content).toEqual(before.scenarios.content);
  });

  test('a disabled guardrail is not applied', () => {
    const off = clone();
    off.guardrails.privacy_relay_no_block = false;
    const f = PROFILE_FIXTURES.privacy_relay;
    expect(assessRecord(f.record, f.ctx, DEFAULT_POLICY).decision.guardrails_applied).toEqual(['privacy_relay_no_block']);
    const a = assessRecord(f.record, f.ctx, off);
    expect(a.decision.guardrails_applied).toEqual([]);
    expect(a.decision.blocked_actions).toBeNull();
  });
});
