/**
 * What a pulling server believes (issue 36, "the signed index"), through a
 * real nginx (and, for a stalled body, a Bun publisher) on 127.0.0.1: a
 * publish past IPINTEL_INDEX_MAX_AGE or dated in the future is refused; the
 * file on disk is served only when it verifies with the configured key (a
 * rotated key, an edited file); the publisher never publishes older than it
 * has published nor prunes what its manifest names; partial downloads are
 * swept at start and stopped on close.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { mapIndexFile } from '../../src/index/map-index-file.ts';
import { IndexPuller, type PollOutcome } from '../../src/index/pull/index-puller.ts';
import { PUBLISHED_INDEX, PUBLISHED_MANIFEST, publishIndex, sha256OfFile } from '../../src/index/publish/publish.ts';
import { signManifest, type PublishedManifest } from '../../src/index/publish/signed-manifest.ts';
import { readPublicKey, readSigningKey, writeSigningKeyPair } from '../../src/index/publish/signing-keys.ts';
import { createIndexPublisher } from '../../src/host/start-publisher.ts';
import { NGINX, startNginx, type Nginx } from '../helpers/nginx.ts';
import { fixedTestPort } from '../helpers/fixed-port.ts';
import { datacenterIndex, daysAgo } from '../helpers/small-build.ts';

const ROOT = resolve(import.meta.dir, '../..');
const runNginx = NGINX !== null || !!process.env.CI;
if (NGINX === null) console.log('pull-trust: skipped (nginx is not installed; .ci/run installs nginx-light)');
const DAY = 86_400_000;
const ADMIN = 'pull-trust-admin-token';

describe.if(runNginx)('what a pulling server believes', () => {
  let work: string;
  let root: string;
  let nginx: Nginx;
  let key: KeyObject;
  let pubKeyPath: string;
  let keyPath: string;
  const pullers: IndexPuller[] = [];
  const children: Bun.Subprocess[] = [];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'ipintel-pull-trust-'));
    root = join(work, 'root');
    mkdirSync(root);
    const keys = writeSigningKeyPair(join(work, 'publisher'));
    key = readSigningKey(keys.keyPath);
    keyPath = keys.keyPath;
    pubKeyPath = keys.pubPath;
    nginx = await startNginx(root, join(work, 'nginx'));
  }, 60_000);

  afterAll(async () => {
    for (const p of pullers) await p.close();
    for (const c of children) c.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    await nginx?.stop().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  });

  /** A publish folder served by nginx at /<name>/. */
  function publishFolder(name: string): { dir: string; url: string } {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    return { dir, url: `${nginx.url}/${name}/${PUBLISHED_INDEX}` };
  }

  /** A folder for a server's pulled index; returns the index path in it. */
  function serverFolder(name: string): string {
    const dir = join(work, 'servers', name);
    mkdirSync(dir, { recursive: true });
    return join(dir, 'ipintel.idx');
  }

  function puller(url: string, localPath: string, options: { publicKey?: KeyObject; maxAgeMs?: number; log?: string[] } = {}): IndexPuller {
    const p = new IndexPuller({
      indexUrl: url,
      publicKey: options.publicKey ?? readPublicKey(pubKeyPath),
      localPath,
      pollMs: 3_600_000,
      maxAgeMs: options.maxAgeMs ?? 30 * DAY,
      swap: async (path) => void mapIndexFile(path),
      log: (l) => options.log?.push(l),
    });
    pullers.push(p);
    return p;
  }

  /** Starts the puller (which checks the file on disk) and returns the outcome of its first poll. */
  async function startAndPoll(p: IndexPuller): Promise<PollOutcome> {
    p.start();
    return p.poll();
  }

  /** Signs and lays out a manifest by hand for `indexPath` (what a leaked key or a publisher with a wrong clock would publish). */
  function publishByHand(dir: string, indexPath: string, signWith: KeyObject = key): PublishedManifest {
    const index = mapIndexFile(indexPath);
    const sha256 = sha256OfFile(indexPath);
    const file = `versions/by-hand-${sha256.slice(0, 12)}.idx`;
    mkdirSync(join(dir, 'versions'), { recursive: true });
    copyFileSync(indexPath, join(dir, file));
    const manifest = signManifest({ format_version: index.meta.formatVersion, sha256, size: index.sizeBytes, built_at: new Date(index.builtAtMs).toISOString(), file, sources: [] }, signWith);
    writeFileSync(join(dir, `${PUBLISHED_MANIFEST}.tmp`), JSON.stringify(manifest));
    renameSync(join(dir, `${PUBLISHED_MANIFEST}.tmp`), join(dir, PUBLISHED_MANIFEST));
    return manifest;
  }

  /** A pulling server (`bun src/main.ts`) on a fixed loopback port. */
  function spawnPulling(localPath: string, url: string, env: Record<string, string> = {}) {
    const port = fixedTestPort();
    const log: string[] = [];
    const proc = Bun.spawn(['bun', 'src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        IPINTEL_INDEX: localPath,
        IPINTEL_DB: ':memory:',
        IPINTEL_INDEX_URL: url,
        IPINTEL_INDEX_PUBKEY: pubKeyPath,
        IPINTEL_INDEX_POLL: '1s',
        IPINTEL_WORKERS: '1',
        IPINTEL_ADMIN_TOKEN: ADMIN,
        IPINTEL_RATE_LIMITS: 'off',
        ...env,
      },
      stdout: 'ignore',
      stderr: 'pipe',
    });
    void (async () => {
      for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) log.push(...new TextDecoder().decode(chunk).split('\n').filter(Boolean));
    })();
    children.push(proc);
    const get = (path: string) => fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    return { proc, log, get };
  }

  async function eventually(check: () => Promise<boolean>, ms = 60_000): Promise<boolean> {
    for (const end = Date.now() + ms; Date.now() < end; await Bun.sleep(200)) if (await check().catch(() => false)) return true;
    return false;
  }

  test('1. a publish built past IPINTEL_INDEX_MAX_AGE is refused by a fresh puller: nothing is served', async () => {
    const pub = publishFolder('expired');
    await publishIndex({ indexPath: await datacenterIndex(work, 'old', ['203.0.113.0/24'], daysAgo(400)), dir: pub.dir, privateKey: key, keep: 3 });
    const local = serverFolder('expired');
    const p = puller(pub.url, local);
    expect(await startAndPoll(p)).toBe('failed');
    expect(p.status.last_error).toMatch(/past IPINTEL_INDEX_MAX_AGE/);
    expect(existsSync(local)).toBe(false);
  }, 60_000);

  test('1. a served index that passes IPINTEL_INDEX_MAX_AGE makes /health 503 and says so in status and metrics', async () => {
    const pub = publishFolder('expiring');
    await publishIndex({ indexPath: await datacenterIndex(work, 'soon', ['203.0.113.0/24'], daysAgo(0)), dir: pub.dir, privateKey: key, keep: 3 });
    const server = spawnPulling(serverFolder('expiring'), pub.url, { IPINTEL_INDEX_MAX_AGE: '30s' });
    const ready = await eventually(async () => (await server.get('/health')).status === 200, 25_000);
    if (!ready) console.error(server.log.join('\n'));
    expect(ready).toBe(true);
    expect(await eventually(async () => (await server.get('/health')).status === 503, 60_000)).toBe(true);
    const health = (await (await server.get('/health')).json()) as { code: string; details: { what: string } };
    expect(health.code).toBe('SERVICE_UNAVAILABLE');
    expect(health.details.what).toBe('index_expired');
    const status = (await (await server.get('/v1/data/status')).json()) as { index: { pull: { expired: boolean; expires_at: string } } };
    expect(status.index.pull.expired).toBe(true);
    expect(await (await server.get('/metrics')).text()).toMatch(/^ipintel_index_pull_expired 1$/m);
  }, 120_000);

  test('2. a publish dated in the future is refused; the honest publish after it is taken', async () => {
    const pub = publishFolder('future');
    const future = await datacenterIndex(work, 'future', ['198.51.100.0/24'], new Date(Date.now() + 3650 * DAY).toISOString());
    publishByHand(pub.dir, future);
    const local = serverFolder('future');
    const p = puller(pub.url, local);
    expect(await startAndPoll(p)).toBe('failed');
    expect(p.status.last_error).toMatch(/in the future/);
    // The publisher itself never publishes a future build, and replaces a future-dated manifest with its next build.
    await expect(publishIndex({ indexPath: future, dir: publishFolder('future-refused').dir, privateKey: key, keep: 3 })).rejects.toThrow(/in the future/);
    const honest = await datacenterIndex(work, 'honest', ['198.51.100.0/24'], daysAgo(1));
    await publishIndex({ indexPath: honest, dir: pub.dir, privateKey: key, keep: 3 });
    expect(await p.poll()).toBe('updated');
    expect(sha256OfFile(local)).toBe(sha256OfFile(honest));
  }, 60_000);

  test('2. a future-dated index kept on disk with its sidecar is not believed after a restart', async () => {
    const pub = publishFolder('future-restart');
    const future = await datacenterIndex(work, 'future-kept', ['198.51.100.0/24'], new Date(Date.now() + 3650 * DAY).toISOString());
    const local = serverFolder('future-restart');
    // What an earlier version accepted and kept: the file and its signed manifest beside it.
    copyFileSync(future, local);
    writeFileSync(`${local}.pulled.json`, JSON.stringify(publishByHand(join(work, 'future-staging'), future)));
    const honest = await datacenterIndex(work, 'honest-2', ['198.51.100.0/24'], daysAgo(1));
    await publishIndex({ indexPath: honest, dir: pub.dir, privateKey: key, keep: 3 });
    const p = puller(pub.url, local);
    expect(await startAndPoll(p)).toBe('updated');
    expect(sha256OfFile(local)).toBe(sha256OfFile(honest));
  }, 60_000);

  test('3. after a key rotation the file pulled under the old key is not served (503) until the new key verifies a publish', async () => {
    const pub = publishFolder('rotate');
    const oldKeys = writeSigningKeyPair(join(work, 'old-key'));
    const oldIndex = await datacenterIndex(work, 'old-key', ['192.0.2.0/24'], daysAgo(2));
    await publishIndex({ indexPath: oldIndex, dir: pub.dir, privateKey: readSigningKey(oldKeys.keyPath), keep: 3 });
    const local = serverFolder('rotate');
    const first = puller(pub.url, local, { publicKey: readPublicKey(oldKeys.pubPath) });
    expect(await startAndPoll(first)).toBe('updated');
    await first.close();
    // The servers restart with the new public key (pubKeyPath); the publisher has not published under it yet.
    const server = spawnPulling(local, pub.url);
    expect(await eventually(async () => (await server.get('/v1/data/status')).status === 503, 30_000)).toBe(true);
    await Bun.sleep(2_000); // a few polls, each refused
    expect((await server.get('/health')).status).toBe(503);
    expect((await server.get('/v1/ip/192.0.2.1')).status).toBe(503);
    const rotated = await datacenterIndex(work, 'new-key', ['192.0.2.0/24', '198.51.100.0/24'], daysAgo(1));
    await publishIndex({ indexPath: rotated, dir: pub.dir, privateKey: key, keep: 3 });
    const ready = await eventually(async () => (await server.get('/health')).status === 200);
    if (!ready) console.error(server.log.join('\n'));
    expect(ready).toBe(true);
    expect(sha256OfFile(local)).toBe(sha256OfFile(rotated));
  }, 120_000);

  /** Pulls a publish of `real` into a fresh folder and returns the folder's index path and a valid index of the same size and build time but other content. */
  async function pulledWithForgery(name: string) {
    const builtAt = daysAgo(1);
    const real = await datacenterIndex(work, `${name}-a`, ['203.0.113.0/24'], builtAt);
    const forged = await datacenterIndex(work, `${name}-b`, ['198.51.100.0/24'], builtAt);
    expect(statSync(forged).size).toBe(statSync(real).size); // the precondition: only the hash tells them apart
    expect(sha256OfFile(forged)).not.toBe(sha256OfFile(real));
    const pub = publishFolder(name);
    await publishIndex({ indexPath: real, dir: pub.dir, privateKey: key, keep: 3 });
    const local = serverFolder(name);
    const first = puller(pub.url, local);
    expect(await startAndPoll(first)).toBe('updated');
    return { pub, local, real, forged, first };
  }

  test('4. an index edited on disk (same size and build time, valid checksums) is not believed after a restart, and is pulled again', async () => {
    const { pub, local, real, forged, first } = await pulledWithForgery('edited-restart');
    await first.close();
    copyFileSync(forged, local);
    const again = puller(pub.url, local);
    expect(await startAndPoll(again)).toBe('updated');
    expect(sha256OfFile(local)).toBe(sha256OfFile(real));
  }, 60_000);

  test('4. an index replaced on disk while served is checked at the next poll and repaired', async () => {
    const { local, real, forged, first } = await pulledWithForgery('edited-running');
    copyFileSync(forged, `${local}.forged`);
    renameSync(`${local}.forged`, local);
    expect(await first.poll()).toBe('updated');
    expect(sha256OfFile(local)).toBe(sha256OfFile(real));
  }, 60_000);

  test('5. the publisher never publishes an index older than the published one, so a fresh puller always finds the named file', async () => {
    const pub = publishFolder('publisher-older');
    const logs: string[] = [];
    const publish = createIndexPublisher({ dir: pub.dir, signingKeyPath: keyPath, keep: 1 }, null, (l) => logs.push(l));
    const newer = await datacenterIndex(work, 'newer', ['203.0.113.0/24'], daysAgo(1));
    const older = await datacenterIndex(work, 'older', ['198.51.100.0/24'], daysAgo(2));
    await publish(newer);
    await publish(older); // a publisher restarted over an older index than its folder holds
    expect(logs.at(-1)).toMatch(/older index is never published/);
    const m = JSON.parse(readFileSync(join(pub.dir, PUBLISHED_MANIFEST), 'utf8')) as PublishedManifest;
    expect(m.sha256).toBe(sha256OfFile(newer));
    expect(existsSync(join(pub.dir, m.file))).toBe(true);
    const local = serverFolder('publisher-older');
    expect(await startAndPoll(puller(pub.url, local))).toBe('updated');
    expect(sha256OfFile(local)).toBe(sha256OfFile(newer));
  }, 60_000);

  test('5. the version the manifest names is never pruned, even when its name sorts first (two builds in one second)', async () => {
    const builtAt = daysAgo(1);
    const x = await datacenterIndex(work, 'same-second-x', ['203.0.113.0/24'], builtAt);
    const y = await datacenterIndex(work, 'same-second-y', ['198.51.100.0/24'], builtAt);
    // Version names are the build second, then the sha256: publish second the one whose name sorts first.
    const [first, second] = sha256OfFile(x) < sha256OfFile(y) ? [y, x] : [x, y];
    const pub = publishFolder('same-second');
    await publishIndex({ indexPath: first, dir: pub.dir, privateKey: key, keep: 1 });
    const m = await publishIndex({ indexPath: second, dir: pub.dir, privateKey: key, keep: 1 });
    expect(existsSync(join(pub.dir, m.file))).toBe(true);
    expect(readdirSync(join(pub.dir, 'versions')).filter((n) => n.endsWith('.idx'))).toEqual([m.file.replace('versions/', '')]);
    const local = serverFolder('same-second');
    expect(await startAndPoll(puller(pub.url, local))).toBe('updated');
    expect(sha256OfFile(local)).toBe(sha256OfFile(second));
  }, 60_000);

  test('6. partial downloads left by a stopped process are removed at start', async () => {
    const local = serverFolder('sweep');
    const left = join(local, '..', '.ipintel.idx.pull-4242-1700000000000');
    writeFileSync(left, Buffer.alloc(64 * 1024));
    const p = puller(`${nginx.url}/nothing-here/${PUBLISHED_INDEX}`, local);
    p.start();
    expect(existsSync(left)).toBe(false);
    await p.close();
  });

  /** A publisher (Bun, on loopback) that sends a valid manifest, then the index's first bytes and nothing more. */
  async function stalledPublisher(name: string) {
    const staging = join(work, `${name}-staging`);
    const index = await datacenterIndex(work, name, ['203.0.113.0/24'], daysAgo(1));
    const m = await publishIndex({ indexPath: index, dir: staging, privateKey: key, keep: 3 });
    const bytes = readFileSync(index);
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      idleTimeout: 0, // the stall lasts until the client gives up
      fetch(req) {
        const path = new URL(req.url).pathname;
        if (path === `/${PUBLISHED_MANIFEST}`) return new Response(readFileSync(join(staging, PUBLISHED_MANIFEST)));
        if (path === `/${m.file}`) {
          const body = new ReadableStream({
            start(controller) {
              controller.enqueue(bytes.subarray(0, 4096));
            },
          });
          return new Response(body, { headers: { 'content-length': String(bytes.length) } });
        }
        return new Response('not found', { status: 404 });
      },
    });
    return { url: `http://127.0.0.1:${server.port}/${PUBLISHED_INDEX}`, stop: () => server.stop(true) };
  }

  /** The partial downloads beside `local`, once one appears (bounded wait). */
  async function partialsOnceStarted(local: string): Promise<() => string[]> {
    const partials = () => readdirSync(join(local, '..')).filter((n) => n.startsWith('.ipintel.idx.pull-'));
    for (let i = 0; i < 400 && partials().length === 0; i++) await Bun.sleep(25);
    expect(partials().length).toBe(1);
    return partials;
  }

  test('6. close() stops a stalled download and removes its partial file', async () => {
    const stalled = await stalledPublisher('stall');
    try {
      const local = serverFolder('stall');
      const p = new IndexPuller({
        indexUrl: stalled.url,
        publicKey: readPublicKey(pubKeyPath),
        localPath: local,
        pollMs: 3_600_000,
        maxAgeMs: 30 * DAY,
        indexTimeoutMs: 600_000,
        swap: async () => {},
        log: () => {},
      });
      const outcome = p.poll();
      const partials = await partialsOnceStarted(local);
      const stopped = p.close();
      expect(await Promise.race([outcome, Bun.sleep(15_000).then(() => 'still downloading')])).toBe('failed');
      await stopped;
      expect(partials()).toEqual([]);
      expect(p.status.last_error).toMatch(/stopped/);
    } finally {
      stalled.stop();
    }
  }, 60_000);

  test('6. a server stopped (SIGTERM) during its first, stalled download exits and leaves no partial file', async () => {
    const stalled = await stalledPublisher('stall-server');
    try {
      const local = serverFolder('stall-server');
      const server = spawnPulling(local, stalled.url);
      const partials = await partialsOnceStarted(local);
      server.proc.kill('SIGTERM');
      expect(await Promise.race([server.proc.exited, Bun.sleep(15_000).then(() => 'still running')])).toBe(0);
      expect(partials()).toEqual([]);
    } finally {
      stalled.stop();
    }
  }, 60_000);
});
