/**
 * With sign-in off, the app (src/http/app.ts) builds its Elysia app of the
 * mounted routes (here only the dashboard, saying sign-in is off) on the
 * dashboard's first request, not with the app: no lookup route needs Elysia,
 * and each worker built it before listening at every start. In a fresh
 * process, whose module registry starts empty.
 */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { resolve } from 'node:path';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';

const ROOT = resolve(import.meta.dir, '../..');

test('sign-in off: Elysia is loaded on the dashboard\'s first request, which it answers (its page saying sign-in is off)', async () => {
  const script = `
    const { loadConfig } = await import(${JSON.stringify(`${ROOT}/src/config.ts`)});
    const { createServices } = await import(${JSON.stringify(`${ROOT}/src/host/start-server.ts`)});
    const { createApp } = await import(${JSON.stringify(`${ROOT}/src/http/app.ts`)});
    const loaded = () => Object.keys(require.cache).some((k) => k.includes('/node_modules/elysia/'));
    const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', IPINTEL_DB: ':memory:', IPINTEL_HISTORY: 'off' });
    const app = createApp(await createServices(config));
    const afterApp = loaded();
    const res = await app.mounted.handle(new Request('http://127.0.0.1/dashboard'));
    const body = await res.text();
    console.log(JSON.stringify({ afterApp, afterRequest: loaded(), status: res.status, html: body.includes('<html') || body.includes('<!doctype') || body.includes('<!DOCTYPE') }));
    process.exit(0);
  `;
  const env: Record<string, string | undefined> = { ...process.env, IPINTEL_INDEX: await fixtureIndexPath() };
  for (const name of Object.keys(env)) if (name.startsWith('IPINTEL_OAUTH_')) delete env[name];
  const run = Bun.spawnSync(['bun', '-e', script], { cwd: ROOT, env });
  if (run.exitCode !== 0) throw new Error(`child failed: ${run.stderr.toString()}`);
  expect(JSON.parse(run.stdout.toString().trim().split('\n').at(-1)!)).toEqual({ afterApp: false, afterRequest: true, status: 503, html: true });
}, 120_000);
