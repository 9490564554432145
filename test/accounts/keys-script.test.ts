/** The keys command (src/commands/keys.ts, through src/cli.ts as `bun run keys` runs it) spawned as operators run it, against a temporary SQLite IPINTEL_DB. */
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keysScriptBehaviour, runKeys } from './helpers/keys-script.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-keys-'));
// A nested folder that does not exist yet: the script must create it.
const dbPath = join(dir, 'nested', 'accounts.sqlite');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('the script creates the database file and its folder', async () => {
  expect(existsSync(dbPath)).toBe(false);
  const r = await runKeys(dbPath, 'create', '--email', 'first@example.test', '--tier', 'free');
  expect(r.code).toBe(0);
  expect(existsSync(dbPath)).toBe(true);
}, 60_000);

keysScriptBehaviour(() => dbPath);
