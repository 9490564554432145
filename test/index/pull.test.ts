/**
 * Publishing and pulling an index through a real nginx on 127.0.0.1: a
 * verified pull, a 304 that downloads nothing, a new publish swapped in, and
 * tampered, foreign-signed, truncated and rolled-back publishes refused with
 * the served index kept; nginx stopped keeps it too.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main as buildIndexCli } from '../../index-builder/build-command.ts';
import { mapIndexFile } from '../../src/index/map-index-file.ts';
import { IndexPuller, type PollOutcome } from '../../src/index/pull/index-puller.ts';
import { checkPullUrl } from '../../src/index/pull/pull-url.ts';
import { PUBLISHED_INDEX, PUBLISHED_MANIFEST, publishIndex, sha256OfFile } from '../../src/index/publish/publish.ts';
import { MAX_MANIFEST_BYTES, signManifest, type PublishedManifest } from '../../src/index/publish/signed-manifest.ts';
import { readPublicKey, readSigningKey, writeSigningKeyPair } from '../../src/index/publish/signing-keys.ts';
import { NGINX, startNginx, type Nginx } from '../helpers/nginx.ts';
import { datacenterIndex, daysAgo } from '../helpers/small-build.ts';

const runNginx = NGINX !== null || !!process.env.CI;
if (NGINX === null) console.log('pull: skipped (nginx is not installed; .ci/run installs nginx-light)');

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'ipintel-pull-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A tiny index: one datacenter list of `cidrs`, built at `builtAt`. */
const tinyIndex = (name: string, cidrs: string[], builtAt: string) => datacenterIndex(work, name, cidrs, builtAt);

describe('index-keygen and --publish', () => {
  test('keygen writes a 0600 private key and a one-line public key, and never overwrites', () => {
    const prefix = join(work, 'keygen');
    const { keyPath, pubPath, publicLine } = writeSigningKeyPair(prefix);
    expect(Bun.file(keyPath).size).toBeGreaterThan(0);
    expect(require('node:fs').statSync(keyPath).mode & 0o777).toBe(0o600);
    expect(readFileSync(pubPath, 'utf8')).toBe(`${publicLine}\n`);
    expect(publicLine).toMatch(/^ed25519:[A-Za-z0-9+/=]+$/);
    expect(() => writeSigningKeyPair(prefix)).toThrow(/exists/);
  });

  test('build-index --publish refuses without a signing key, before building', async () => {
    const manifest = join(work, 'refuse.json');
    writeFileSync(manifest, JSON.stringify({ sources: [] }));
    const saved = process.env.IPINTEL_INDEX_SIGNING_KEY;
    delete process.env.IPINTEL_INDEX_SIGNING_KEY;
    try {
      const code = await buildIndexCli(['--manifest', manifest, '--no-defaults', '--out', join(work, 'never.idx'), '--publish', join(work, 'pub-refused'), '--quiet']);
      expect(code).toBe(2);
      expect(Bun.file(join(work, 'never.idx')).size).toBe(0);
    } finally {
      if (saved !== undefined) process.env.IPINTEL_INDEX_SIGNING_KEY = saved;
    }
  });

  test('build-index --publish writes the index, its signed manifest and keeps IPINTEL_PUBLISH_KEEP versions', async () => {
    const { keyPath, pubPath } = writeSigningKeyPair(join(work, 'cli'));
    const list = join(work, 'cli-list.txt');
    const manifest = join(work, 'cli-feeds.json');
    const dir = join(work, 'pub-cli');
    const env = { IPINTEL_INDEX_SIGNING_KEY: keyPath, IPINTEL_PUBLISH_KEEP: '2' };
    Object.assign(process.env, env);
    try {
      for (let i = 1; i <= 3; i++) {
        writeFileSync(list, `198.51.${i}.0/24\n`);
        writeFileSync(manifest, JSON.stringify({ sources: [{ type: 'cidr-list', category: 'datacenter', path: 'cli-list.txt' }] }));
        expect(await buildIndexCli(['--manifest', manifest, '--no-defaults', '--out', join(work, `cli-${i}.idx`), '--publish', dir, '--quiet'])).toBe(0);
      }
    } finally {
      for (const k of Object.keys(env)) delete process.env[k];
    }
    const published = readPublicKey(pubPath);
    const { verifyManifest } = await import('../../src/index/publish/signed-manifest.ts');
    const m = verifyManifest(readFileSync(join(dir, PUBLISHED_MANIFEST), 'utf8'), published);
    expect(m.sha256).toBe(sha256OfFile(join(work, 'cli-3.idx')));
    expect(sha256OfFile(join(dir, PUBLISHED_INDEX))).toBe(m.sha256);
    expect(sha256OfFile(join(dir, m.file))).toBe(m.sha256);
    expect(m.sources.map((s) => s.type)).toEqual(['cidr-list']);
    const versions = require('node:fs').readdirSync(join(dir, 'versions')).filter((n: string) => n.endsWith('.idx'));
    expect(versions.length).toBe(2);
  }, 120_000);
});

describe('publishing the same bytes again', () => {
  test('changes nothing when the manifest is intact, and repairs one that no longer verifies', async () => {
    const index = await tinyIndex('again', ['192.0.2.0/25'], '2026-10-01T00:00:00Z');
    const dir = join(work, 'pub-again');
    const { keyPath, pubPath } = writeSigningKeyPair(join(work, 'again'));
    const key = readSigningKey(keyPath);
    const first = await publishIndex({ indexPath: index, dir, privateKey: key, keep: 3 });
    const manifestPath = join(dir, PUBLISHED_MANIFEST);
    const before = require('node:fs').statSync(manifestPath).mtimeMs;
    expect(await publishIndex({ indexPath: index, dir, privateKey: key, keep: 3 })).toEqual(first);
    expect(require('node:fs').statSync(manifestPath).mtimeMs).toBe(before);
    writeFileSync(manifestPath, JSON.stringify({ ...first, built_at: '2027-01-01T00:00:00.000Z' })); // no longer verifies
    await publishIndex({ indexPath: index, dir, privateKey: key, keep: 3 });
    const { verifyManifest } = await import('../../src/index/publish/signed-manifest.ts');
    expect(verifyManifest(readFileSync(manifestPath, 'utf8'), readPublicKey(pubPath)).built_at).toBe(first.built_at);
  }, 60_000);
});

describe('a manifest replaced within the second', () => {
  test('gets a later mtime, so a static server validating by mtime and size never answers 304 for it', async () => {
    const dir = join(work, 'pub-same-second');
    const key = readSigningKey(writeSigningKeyPair(join(work, 'same-second')).keyPath);
    const a = await tinyIndex('second-a', ['192.0.2.0/26'], '2026-10-02T00:00:00Z');
    const b = await tinyIndex('second-b', ['192.0.2.64/26'], '2026-10-03T00:00:00Z');
    const mtime = () => Math.floor(require('node:fs').statSync(join(dir, PUBLISHED_MANIFEST)).mtimeMs / 1000);
    await publishIndex({ indexPath: a, dir, privateKey: key, keep: 3 });
    const first = mtime();
    await publishIndex({ indexPath: b, dir, privateKey: key, keep: 3 });
    expect(mtime()).toBeGreaterThan(first);
  }, 60_000);
});

describe.if(runNginx)('pulling through nginx', () => {
  let nginx: Nginx;
  let pub: string;
  let local: string;
  let key: ReturnType<typeof readSigningKey>;
  let other: ReturnType<typeof readSigningKey>;
  let puller: IndexPuller;
  const swaps: string[] = [];
  const logs: string[] = [];
  const indexes: Record<string, string> = {};

  beforeAll(async () => {
    pub = join(work, 'pub');
    mkdirSync(pub);
    const good = writeSigningKeyPair(join(work, 'good'));
    key = readSigningKey(good.keyPath);
    other = readSigningKey(writeSigningKeyPair(join(work, 'other')).keyPath);
    indexes.a = await tinyIndex('a', ['203.0.113.0/24'], daysAgo(3));
    indexes.b = await tinyIndex('b', ['203.0.113.0/24', '198.51.100.0/24'], daysAgo(2));
    indexes.c = await tinyIndex('c', ['192.0.2.0/24'], daysAgo(1));
    await publishIndex({ indexPath: indexes.a, dir: pub, privateKey: key, keep: 3 });
    nginx = await startNginx(pub, join(work, 'nginx'));
    mkdirSync(join(work, 'server'));
    local = join(work, 'server', 'ipintel.idx');
    puller = new IndexPuller({
      indexUrl: `${nginx.url}/${PUBLISHED_INDEX}`,
      publicKey: readPublicKey(good.pubPath),
      localPath: local,
      pollMs: 3_600_000,
      maxAgeMs: 30 * 86_400_000,
      swap: async (path) => {
        mapIndexFile(path);
        swaps.push(sha256OfFile(path));
      },
      log: (l) => logs.push(l),
    });
  }, 120_000);
  afterAll(async () => {
    puller?.close();
    await nginx?.stop().catch(() => {});
  }, 120_000);

  const poll = (): Promise<PollOutcome> => puller.poll();
  const fileGets = async () => (await nginx.requests()).filter((r) => r.includes('/versions/') && r.startsWith('GET'));

  test('the first poll downloads, verifies and swaps in the published index', async () => {
    expect(await poll()).toBe('updated');
    expect(sha256OfFile(local)).toBe(sha256OfFile(indexes.a));
    expect(swaps).toEqual([sha256OfFile(indexes.a)]);
    expect(puller.status.sha256).toBe(sha256OfFile(indexes.a));
    expect(puller.status.last_error).toBeNull();
  }, 120_000);

  test('an unchanged manifest is a 304 and downloads nothing', async () => {
    const before = (await fileGets()).length;
    const notModified = async () => (await nginx.requests()).filter((r) => r === `GET /${PUBLISHED_MANIFEST} 304`).length;
    const before304 = await notModified();
    expect(await poll()).toBe('not_modified');
    expect(await notModified()).toBe(before304 + 1);
    expect((await fileGets()).length).toBe(before);
  }, 120_000);

  test('a new publish is swapped in at the next poll', async () => {
    await publishIndex({ indexPath: indexes.b, dir: pub, privateKey: key, keep: 3 });
    expect(await poll()).toBe('updated');
    expect(sha256OfFile(local)).toBe(sha256OfFile(indexes.b));
    expect(swaps.length).toBe(2);
  }, 120_000);

  /**
   * Publishes C without its cheaper transfers (so the plain file is what is pulled: deltas and compressed copies
   * have their own tests in pull-transfers.test.ts), lets `spoil` damage what was published, polls, and checks B still serves.
   */
  async function refused(spoil: (m: PublishedManifest) => void | Promise<void>, reason: RegExp): Promise<void> {
    const m = await publishIndex({ indexPath: indexes.c, dir: pub, privateKey: key, keep: 5 });
    for (const file of [m.compressed?.file, ...(m.deltas ?? []).map((d) => d.file)]) if (file) rmSync(join(pub, file));
    await spoil(m);
    const swapsBefore = swaps.length;
    expect(await poll()).toBe('failed');
    expect(puller.status.last_error).toMatch(reason);
    expect(swaps.length).toBe(swapsBefore);
    expect(sha256OfFile(local)).toBe(sha256OfFile(indexes.b));
    // No temp file is left beside the served one.
    expect(require('node:fs').readdirSync(join(work, 'server')).filter((n: string) => n.includes('.pull-'))).toEqual([]);
  }

  test('a tampered index (same size, one byte changed) is refused', async () => {
    await refused((m) => {
      const path = join(pub, m.file);
      const bytes = readFileSync(path);
      bytes[bytes.length - 100] ^= 0xff;
      rmSync(path); // versions are hard links: write a new file, not through the link
      writeFileSync(path, bytes);
    }, /sha256 differs/);
  }, 120_000);

  test('a manifest signed by another key is refused', async () => {
    await refused((m) => {
      const { signature: _, ...body } = m;
      writeFileSync(join(pub, PUBLISHED_MANIFEST), JSON.stringify(signManifest(body, other)));
    }, /signature does not verify/);
  }, 120_000);

  test('a manifest whose fields were edited after signing is refused', async () => {
    await refused((m) => {
      writeFileSync(join(pub, PUBLISHED_MANIFEST), JSON.stringify({ ...m, built_at: '2027-01-01T00:00:00.000Z' }));
    }, /signature does not verify/);
  }, 120_000);

  test('a manifest past its size cap is refused unparsed', async () => {
    await refused(() => {
      writeFileSync(join(pub, PUBLISHED_MANIFEST), ' '.repeat(MAX_MANIFEST_BYTES + 1));
    }, /manifest larger than/);
  }, 120_000);

  test('a truncated index is refused', async () => {
    await refused((m) => {
      const path = join(pub, m.file);
      const copy = `${path}.copy`;
      copyFileSync(path, copy);
      rmSync(path);
      copyFileSync(copy, path);
      truncateSync(path, m.size - 4096);
    }, /truncated/);
  }, 120_000);

  test('an older manifest (rollback) is refused', async () => {
    await refused(async () => {
      // A replayed older publish (the publisher itself never publishes older than it has published).
      const staging = join(work, 'pub-rollback');
      const m = await publishIndex({ indexPath: indexes.a, dir: staging, privateKey: key, keep: 5 });
      copyFileSync(join(staging, m.file), join(pub, m.file));
      copyFileSync(join(staging, PUBLISHED_MANIFEST), join(pub, PUBLISHED_MANIFEST));
    }, /older than the served index/);
  }, 120_000);

  test('a restarted puller knows what it serves from its sidecar and downloads nothing', async () => {
    await publishIndex({ indexPath: indexes.b, dir: pub, privateKey: key, keep: 5 });
    const before = (await fileGets()).length;
    const again = new IndexPuller({
      indexUrl: `${nginx.url}/${PUBLISHED_INDEX}`,
      publicKey: readPublicKey(join(work, 'good.pub')),
      localPath: local,
      pollMs: 3_600_000,
      maxAgeMs: 30 * 86_400_000,
      swap: async () => {
        throw new Error('must not swap');
      },
      log: () => {},
    });
    expect(again.adoptLocal()).toBe(true); // checked against its sidecar; no scheduled poll, poll by hand
    expect(again.status.sha256).toBe(sha256OfFile(indexes.b));
    expect(await again.poll()).toBe('unchanged');
    expect((await fileGets()).length).toBe(before);
  }, 120_000);

  test('nginx stopped: the served index stays and the failure is reported', async () => {
    await nginx.stop();
    expect(await poll()).toBe('failed');
    expect(puller.status.last_error).toMatch(/unreachable/);
    expect(sha256OfFile(local)).toBe(sha256OfFile(indexes.b));
    expect(puller.status.consecutive_failures).toBeGreaterThan(0);
    // No fetched bytes and no key in what is logged.
    expect(logs.join('\n')).not.toMatch(/BEGIN|PRIVATE/);
  }, 120_000);
});

describe('which URLs may be pulled from', () => {
  test('https anywhere; plain http only to loopback and private addresses', async () => {
    await expect(checkPullUrl('https://example.invalid/ipintel.idx')).resolves.toBeUndefined();
    await expect(checkPullUrl('http://127.0.0.1:8080/ipintel.idx')).resolves.toBeUndefined();
    await expect(checkPullUrl('http://10.1.2.3/ipintel.idx')).resolves.toBeUndefined();
    await expect(checkPullUrl('http://[fd00::1]/ipintel.idx')).resolves.toBeUndefined();
    await expect(checkPullUrl('http://8.8.8.8/ipintel.idx')).rejects.toThrow(/only to loopback and private/);
    await expect(checkPullUrl('http://169.254.169.254/ipintel.idx')).rejects.toThrow(/only to loopback and private/);
    await expect(checkPullUrl('ftp://127.0.0.1/ipintel.idx')).rejects.toThrow(/not a pull protocol/);
  });

  test('a host name is checked on every address it resolves to, and one that does not answer in time is refused, not waited on', async () => {
    const answers = (addresses: string[]) => async () => addresses.map((address) => ({ address }));
    await expect(checkPullUrl('http://publisher.internal/ipintel.idx', { lookup: answers(['10.0.0.7', 'fd00::7']) })).resolves.toBeUndefined();
    await expect(checkPullUrl('http://publisher.internal/ipintel.idx', { lookup: answers(['10.0.0.7', '8.8.8.8']) })).rejects.toThrow(/8\.8\.8\.8 \(use https\)/);
    const hangs = () => new Promise<never>(() => {});
    await expect(checkPullUrl('http://publisher.internal/ipintel.idx', { lookup: hangs, timeoutMs: 50 })).rejects.toThrow(/does not resolve \(no answer within 50 ms\)/);
  });
});
