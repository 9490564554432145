/**
 * Two real servers (one with two workers) pulling from a publish directory
 * served by a real nginx on 127.0.0.1: 503 until the first verified index,
 * then identical answers; a new publish is swapped in by both within a poll;
 * a tampered publish is refused with the reason in the admin status while
 * the old index serves; nginx stopped, both keep serving.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PUBLISHED_INDEX, PUBLISHED_MANIFEST, publishIndex } from '../../src/index/publish/publish.ts';
import { readSigningKey, writeSigningKeyPair } from '../../src/index/publish/signing-keys.ts';
import { NGINX, startNginx, type Nginx } from '../helpers/nginx.ts';
import { fixedTestPort } from '../helpers/fixed-port.ts';
import { datacenterIndex, daysAgo } from '../helpers/small-build.ts';

const ROOT = resolve(import.meta.dir, '../..');
const runNginx = NGINX !== null || !!process.env.CI;
if (NGINX === null) console.log('pull-servers: skipped (nginx is not installed; .ci/run installs nginx-light)');
const ADMIN = 'pull-test-admin-token';
const B_BUILT = daysAgo(2);

interface Served {
  port: number;
  log: string[];
  proc: ReturnType<typeof Bun.spawn>;
  get(path: string, admin?: boolean): Promise<Response>;
  stop(): Promise<void>;
}

describe.if(runNginx)('servers pulling through nginx', () => {
  let work: string;
  let pub: string;
  let nginx: Nginx;
  let key: ReturnType<typeof readSigningKey>;
  let pubKeyPath: string;
  const servers: Served[] = [];
  const idx: Record<string, string> = {};

  const tinyIndex = (name: string, cidrs: string[], builtAt: string) => datacenterIndex(work, name, cidrs, builtAt);

  function startPulling(name: string, workers: number): Served {
    const dir = join(work, name);
    mkdirSync(dir);
    const port = fixedTestPort();
    const proc = Bun.spawn(['bun', 'run', 'src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        IPINTEL_INDEX: join(dir, 'ipintel.idx'),
        IPINTEL_DB: join(dir, 'accounts.sqlite'),
        IPINTEL_INDEX_URL: `${nginx.url}/${PUBLISHED_INDEX}`,
        IPINTEL_INDEX_PUBKEY: pubKeyPath,
        IPINTEL_INDEX_POLL: '1s',
        IPINTEL_WORKERS: String(workers),
        IPINTEL_ADMIN_TOKEN: ADMIN,
        IPINTEL_RATE_LIMITS: 'off',
      },
      stdout: 'ignore',
      stderr: 'pipe',
    });
    const log: string[] = [];
    void (async () => {
      for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) log.push(...new TextDecoder().decode(chunk).split('\n').filter(Boolean));
    })();
    const s: Served = {
      port,
      log,
      proc,
      get: (path, admin = false) => fetch(`http://127.0.0.1:${port}${path}`, admin ? { headers: { authorization: `Bearer ${ADMIN}` } } : {}),
      async stop() {
        proc.kill();
        await proc.exited;
      },
    };
    servers.push(s);
    return s;
  }

  /** Polls until `check` holds (bounded); returns whether it did. */
  async function eventually(check: () => Promise<boolean>, ms = 30_000): Promise<boolean> {
    for (const end = Date.now() + ms; Date.now() < end; await Bun.sleep(150)) {
      if (await check().catch(() => false)) return true;
    }
    return false;
  }

  const builtAt = async (s: Served) => ((await (await s.get('/health')).json()) as { index?: { built_at?: string } }).index?.built_at ?? null;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'ipintel-pull-servers-'));
    pub = join(work, 'pub');
    mkdirSync(pub);
    const keys = writeSigningKeyPair(join(work, 'publisher'));
    key = readSigningKey(keys.keyPath);
    pubKeyPath = keys.pubPath;
    idx.a = await tinyIndex('a', ['203.0.113.0/24'], daysAgo(3));
    idx.b = await tinyIndex('b', ['203.0.113.0/24', '198.51.100.0/24'], B_BUILT);
    idx.c = await tinyIndex('c', ['192.0.2.0/24'], daysAgo(1));
    nginx = await startNginx(pub, join(work, 'nginx'));
  }, 120_000);

  afterAll(async () => {
    for (const s of servers) await s.stop().catch(() => {});
    await nginx?.stop().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  });

  test('before anything is published: /health and lookups answer 503 with a clear error', async () => {
    const one = startPulling('one', 2);
    expect(await eventually(async () => (await one.get('/health')).status === 503)).toBe(true);
    const lookup = await one.get('/v1/ip/203.0.113.5');
    expect(lookup.status).toBe(503);
    const body = (await lookup.json()) as { code: string; error: string };
    expect(body.code).toBe('SERVICE_UNAVAILABLE');
    expect(body.error).toMatch(/first verified index/);
  }, 60_000);

  test('a publish reaches both servers, which answer identically', async () => {
    await publishIndex({ indexPath: idx.a, dir: pub, privateKey: key, keep: 5 });
    const two = startPulling('two', 1);
    for (const s of servers) {
      const ready = await eventually(async () => (await s.get('/health')).status === 200, 60_000);
      if (!ready) console.error(`server on ${s.port} not ready:\n${s.log.join('\n')}`);
      expect(ready).toBe(true);
    }
    const answers = await Promise.all(servers.map(async (s) => (await s.get('/v1/ip/203.0.113.5')).json()));
    expect(answers[0]).toEqual(answers[1]);
    expect((answers[0] as { classification: { is_datacenter: boolean } }).classification.is_datacenter).toBe(true);
    const status = (await (await two.get('/v1/data/status')).json()) as { index: { source: string; pull: Record<string, unknown> } };
    expect(status.index.source).toBe('pull');
    expect(status.index.pull.last_change).not.toBeNull();
    expect(status.index.pull.url).toBeUndefined(); // the URL and errors are the admin's
  }, 90_000);

  test('a new publish is swapped in by both; unchanged polls are 304s that download nothing', async () => {
    await publishIndex({ indexPath: idx.b, dir: pub, privateKey: key, keep: 5 });
    for (const s of servers) expect(await eventually(async () => (await builtAt(s)) === B_BUILT)).toBe(true);
    for (const s of servers) expect(((await (await s.get('/v1/ip/198.51.100.7')).json()) as { classification: { is_datacenter: boolean } }).classification.is_datacenter).toBe(true);
    const downloads = async () => (await nginx.requests()).filter((r) => r.startsWith('GET /versions/'));
    const before = (await downloads()).length;
    await Bun.sleep(3_500); // a few polls of each server
    const after = await nginx.requests();
    expect((await downloads()).length).toBe(before);
    expect(after.filter((r) => r === `GET /${PUBLISHED_INDEX}.json 304`).length).toBeGreaterThan(2);
  }, 90_000);

  test('a tampered publish is refused by both with the reason in the admin status; the old index serves', async () => {
    // Published aside and damaged there, then laid out for nginx manifest last: the servers poll every
    // second, so a manifest visible before the damage would let them fetch the good file.
    const staging = join(work, 'pub-staging');
    const m = await publishIndex({ indexPath: idx.c, dir: staging, privateKey: key, keep: 5 });
    const bytes = readFileSync(join(staging, m.file));
    bytes[bytes.length - 64] ^= 0x01;
    writeFileSync(join(pub, m.file), bytes);
    writeFileSync(join(pub, 'manifest.tmp'), readFileSync(join(staging, PUBLISHED_MANIFEST)));
    renameSync(join(pub, 'manifest.tmp'), join(pub, PUBLISHED_MANIFEST));
    const later = Date.now() / 1000 + 2; // a new mtime for nginx's validators (mtime seconds and size)
    utimesSync(join(pub, PUBLISHED_MANIFEST), later, later);
    for (const s of servers) {
      expect(
        await eventually(async () => {
          const st = (await (await s.get('/v1/data/status', true)).json()) as { index: { pull: { last_error: string | null } } };
          return /sha256 differs/.test(st.index.pull.last_error ?? '');
        }),
      ).toBe(true);
      expect(await builtAt(s)).toBe(B_BUILT);
    }
    const metrics = await (await servers[0]!.get('/metrics', true)).text();
    expect(metrics).toMatch(/ipintel_index_pull_polls\{result="failed"\} [1-9]/);
  }, 90_000);

  test('nginx stopped: both keep serving', async () => {
    await nginx.stop();
    await Bun.sleep(2_500);
    for (const s of servers) {
      expect((await s.get('/v1/ip/203.0.113.5')).status).toBe(200);
      expect(await builtAt(s)).toBe(B_BUILT);
    }
  }, 60_000);
});
