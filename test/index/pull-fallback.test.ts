/**
 * IPINTEL_INDEX_FALLBACK=default: a pulling server with no index and nothing
 * published yet builds the embedded default (here a small stand-in for the
 * data packages) and serves it; the first verified publish then replaces it,
 * even one built earlier (the rollback check compares pulled manifests only).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import { PUBLISHED_INDEX, publishIndex } from '../../src/index/publish/publish.ts';
import { readSigningKey, writeSigningKeyPair } from '../../src/index/publish/signing-keys.ts';
import { NGINX, startNginx, type Nginx } from '../helpers/nginx.ts';
import { fixedTestPort } from '../helpers/fixed-port.ts';
import { writeSmallDefaultData } from '../ship/small-default-data.ts';
import { daysAgo } from '../helpers/small-build.ts';

const ROOT = resolve(import.meta.dir, '../..');
const runNginx = NGINX !== null || !!process.env.CI;
if (NGINX === null) console.log('pull-fallback: skipped (nginx is not installed; .ci/run installs nginx-light)');

describe.if(runNginx)('a pulling server with IPINTEL_INDEX_FALLBACK=default', () => {
  let work: string;
  let nginx: Nginx;
  let server: Bun.Subprocess | null = null;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'ipintel-pull-fallback-'));
    mkdirSync(join(work, 'pub'));
    nginx = await startNginx(join(work, 'pub'), join(work, 'nginx'));
  });
  afterAll(async () => {
    server?.kill();
    await server?.exited;
    await nginx?.stop().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  });

  test('serves the embedded default until the first verified publish, then the publish', async () => {
    const keys = writeSigningKeyPair(join(work, 'keys'));
    const port = fixedTestPort();
    mkdirSync(join(work, 'server'));
    mkdirSync(join(work, 'no-feeds'));
    server = Bun.spawn(['bun', 'src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        IPINTEL_INDEX: join(work, 'server', 'ipintel.idx'),
        IPINTEL_DB: ':memory:',
        IPINTEL_INDEX_URL: `${nginx.url}/${PUBLISHED_INDEX}`,
        IPINTEL_INDEX_PUBKEY: keys.pubPath,
        IPINTEL_INDEX_POLL: '1s',
        IPINTEL_INDEX_FALLBACK: 'default',
        IPINTEL_DATA_DIR: writeSmallDefaultData(join(work, 'data')),
        IPINTEL_FEEDS_DIR: join(work, 'no-feeds'),
        IPINTEL_WORKERS: '1',
      },
      stdout: 'ignore',
      stderr: 'ignore',
    });
    const url = `http://127.0.0.1:${port}`;
    const body = async (ip: string) => (await (await fetch(`${url}/v1/ip/${ip}`)).json()) as { location: { city: string } | null; classification: { is_datacenter: boolean } };
    let served = false;
    for (let i = 0; i < 600 && !served; i++) {
      await Bun.sleep(200);
      served = (await fetch(`${url}/health`).catch(() => null))?.status === 200;
    }
    expect(served).toBe(true);
    expect((await body('8.8.8.8')).location?.city).toBe('Mountain View'); // the small default data

    const list = join(work, 'published.txt');
    writeFileSync(list, '203.0.113.0/24\n');
    const published = join(work, 'published.idx');
    const builtAt = daysAgo(2); // before the default built at start: any verified publish replaces the fallback
    await buildIndex({ sources: [{ options: { type: 'cidr-list', category: 'datacenter', path: list }, absPath: list, displayPath: 'published.txt' }], out: published, quiet: true, builtAtMs: Date.parse(builtAt) });
    await publishIndex({ indexPath: published, dir: join(work, 'pub'), privateKey: readSigningKey(keys.keyPath), keep: 3 });
    let swapped = false;
    for (let i = 0; i < 150 && !swapped; i++) {
      await Bun.sleep(200);
      swapped = (await body('203.0.113.9')).classification.is_datacenter;
    }
    expect(swapped).toBe(true);
    expect(((await (await fetch(`${url}/health`)).json()) as { index: { built_at: string } }).index.built_at).toBe(builtAt);
  }, 180_000);
});
