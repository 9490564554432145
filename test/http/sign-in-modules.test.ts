/**
 * The app loads Arctic (the sign-in routes' OAuth client) only where sign-in
 * is configured, and then while the app is built, before any request: each
 * case in a fresh process, whose module registry starts empty.
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dir, '../..');

/** Builds the app in a fresh process with `env`; returns whether Arctic was loaded before and after (no request served). */
function arcticLoaded(env: Record<string, string>): { beforeApp: boolean; afterApp: boolean } {
  const script = `
    const { loadConfig } = await import(${JSON.stringify(`${ROOT}/src/config.ts`)});
    const { createServices } = await import(${JSON.stringify(`${ROOT}/src/host/start-server.ts`)});
    const { createApp } = await import(${JSON.stringify(`${ROOT}/src/http/app.ts`)});
    const loaded = () => Object.keys(require.cache).some((k) => k.includes('/node_modules/arctic/'));
    const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', IPINTEL_DB: ':memory:', IPINTEL_HISTORY: 'off' });
    const services = await createServices(config);
    const beforeApp = loaded();
    createApp(services);
    console.log(JSON.stringify({ beforeApp, afterApp: loaded() }));
    process.exit(0);
  `;
  const run = Bun.spawnSync(['bun', '-e', script], { cwd: ROOT, env: { ...process.env, ...env } });
  if (run.exitCode !== 0) throw new Error(`child failed: ${run.stderr.toString()}`);
  return JSON.parse(run.stdout.toString().trim().split('\n').at(-1)!);
}

describe('sign-in modules', () => {
  test('sign-in off: Arctic is never loaded', async () => {
    const { fixtureIndexPath } = await import('../helpers/fixture-index.ts');
    expect(arcticLoaded({ IPINTEL_INDEX: await fixtureIndexPath() })).toEqual({ beforeApp: false, afterApp: false });
  }, 120_000);

  test('sign-in on: Arctic is loaded while the app is built, before any request', async () => {
    const { fixtureIndexPath } = await import('../helpers/fixture-index.ts');
    const env = {
      IPINTEL_INDEX: await fixtureIndexPath(),
      IPINTEL_OAUTH_PROVIDER: 'github',
      IPINTEL_OAUTH_CLIENT_ID: 'c',
      IPINTEL_OAUTH_CLIENT_SECRET: 's',
      IPINTEL_OAUTH_REDIRECT_URI: 'https://x.example/auth/callback',
    };
    expect(arcticLoaded(env)).toEqual({ beforeApp: false, afterApp: true });
  }, 120_000);
});
