/**
 * The allocator setting every documented way of running the server applies
 * (docs/http.md, Performance notes): `bun run start` sets
 * MIMALLOC_PURGE_DELAY unless the operator's environment already does, and
 * the container image and the systemd example set the same value.
 */
import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startScriptDefaults, withStartDefaults } from '../../tools/start-env.ts';
import { BUILD_PURGE_DELAY, buildChildEnv } from '../../src/feeds/build-child-env.ts';

const REPO = resolve(import.meta.dir, '../..');
const startScript: string = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).scripts.start;
const tmp = mkdtempSync(join(tmpdir(), 'ipintel-start-env-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs the start script's environment prefix in front of a command printing the variable, through `bun run`. */
async function startEnvSeen(env: Record<string, string>): Promise<string> {
  const prefix = startScript.slice(0, startScript.indexOf('bun run src/main.ts'));
  expect(prefix).toContain('MIMALLOC_PURGE_DELAY=');
  const script = `${prefix}${JSON.stringify(process.execPath)} -e "console.log(process.env.MIMALLOC_PURGE_DELAY)"`;
  writeFileSync(join(tmp, 'package.json'), JSON.stringify({ name: 'start-env', private: true, scripts: { start: script } }));
  const { MIMALLOC_PURGE_DELAY: _, ...rest } = process.env;
  const proc = Bun.spawn([process.execPath, 'run', '--silent', 'start'], { cwd: tmp, env: { ...rest, ...env }, stdout: 'pipe', stderr: 'pipe' });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  expect(code).toBe(0);
  return out.trim();
}

describe('MIMALLOC_PURGE_DELAY', () => {
  test('the start script names it with a default the tools read back', () => {
    expect(startScriptDefaults()).toEqual({ MIMALLOC_PURGE_DELAY: '-1' });
    expect(withStartDefaults({ MIMALLOC_PURGE_DELAY: '5', PORT: undefined })).toEqual({ MIMALLOC_PURGE_DELAY: '5' });
  });

  test('`bun run start` sets it when the environment does not', async () => {
    expect(await startEnvSeen({})).toBe('-1');
  });

  test('an operator value wins', async () => {
    expect(await startEnvSeen({ MIMALLOC_PURGE_DELAY: '250' })).toBe('250');
  });

  test('the container image and the systemd example set the same value', () => {
    const dockerfile = readFileSync(join(REPO, 'Dockerfile'), 'utf8');
    const runtime = dockerfile.slice(dockerfile.indexOf('AS runtime'));
    expect(runtime).toMatch(/^\s+MIMALLOC_PURGE_DELAY=-1 \\$/m);
    expect(readFileSync(join(REPO, 'docs/deployment.md'), 'utf8')).toMatch(/^Environment=.*\bMIMALLOC_PURGE_DELAY=-1(\s|$)/m);
  });
});

describe("a build child's purge delay", () => {
  test('a server that never purges starts its build children with the delay builds were measured with', () => {
    expect(buildChildEnv({ MIMALLOC_PURGE_DELAY: '-1', PORT: '8080' })).toEqual({ MIMALLOC_PURGE_DELAY: BUILD_PURGE_DELAY, PORT: '8080' });
    expect(BUILD_PURGE_DELAY).toBe('1000');
  });

  test('any other setting, or none, is passed on as it is', () => {
    expect(buildChildEnv({ MIMALLOC_PURGE_DELAY: '250' }).MIMALLOC_PURGE_DELAY).toBe('250');
    expect(buildChildEnv({ MIMALLOC_PURGE_DELAY: '0' }).MIMALLOC_PURGE_DELAY).toBe('0');
    const unset = { PORT: '1' };
    expect(buildChildEnv(unset)).toBe(unset);
  });
});
