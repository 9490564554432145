/** Old fixture indexes of other builder versions are removed; recent ones and unrelated files are kept. */
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeStaleFixtures, STALE_FIXTURE_MS } from '../helpers/fixture-index.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-fixture-cleanup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('stale fixtures of other fingerprints go; the current one, recent ones and other files stay', () => {
  const now = Date.now();
  const file = (name: string, ageMs: number) => {
    const p = join(dir, name);
    writeFileSync(p, 'x');
    const t = (now - ageMs) / 1000;
    utimesSync(p, t, t);
    return p;
  };
  const current = file('ipintel-fixture-0123456789abcdef.idx', 3 * STALE_FIXTURE_MS);
  file('ipintel-fixture-aaaaaaaaaaaaaaaa.idx', 2 * STALE_FIXTURE_MS);
  file('ipintel-fixture-bbbbbbbbbbbbbbbb.idx', STALE_FIXTURE_MS / 2);
  file('ipintel-fixture-notafingerprint.idx', 2 * STALE_FIXTURE_MS);
  file('other.idx', 2 * STALE_FIXTURE_MS);
  expect(removeStaleFixtures(dir, current, now)).toEqual(['ipintel-fixture-aaaaaaaaaaaaaaaa.idx']);
  expect(existsSync(current)).toBe(true);
  expect(existsSync(join(dir, 'ipintel-fixture-bbbbbbbbbbbbbbbb.idx'))).toBe(true);
  expect(existsSync(join(dir, 'ipintel-fixture-notafingerprint.idx'))).toBe(true);
  expect(existsSync(join(dir, 'other.idx'))).toBe(true);
});
