/** IPINTEL_POLICY reaches the server through its configuration (not the process environment). */
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_POLICY } from '../../src/scoring/index.ts';
import { startTestServer } from '../helpers/test-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-policy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('a policy file named by IPINTEL_POLICY is the one in force', async () => {
  const path = join(dir, 'policy.json');
  writeFileSync(path, JSON.stringify({ ...DEFAULT_POLICY, policy_version: '2099-01.7' }));
  expect(process.env.IPINTEL_POLICY).toBeUndefined();
  const server = await startTestServer({ IPINTEL_POLICY: path, IPINTEL_RATE_LIMITS: 'off' });
  try {
    const status = (await (await fetch(`${server.url}/v1/data/status`)).json()) as { policy_version: string };
    expect(status.policy_version).toBe('2099-01.7');
    const v1 = (await (await fetch(`${server.url}/v1/ip/1.1.1.1?fields=decision`)).json()) as { decision: { policy_version: string } };
    expect(v1.decision.policy_version).toBe('2099-01.7');
  } finally {
    await server.stop();
  }
}, 120_000);
