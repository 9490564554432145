/**
 * Cheaper pulls through a real nginx on 127.0.0.1: v1, v2, v3 published from
 * small builds differing by known edits; a server on v1 pulls v3 by the
 * v1→v3 delta, one on v2 by v2→v3, a fresh one by the compressed copy, and
 * all three hold the very bytes of the v3 build. A corrupted delta, a delta
 * whose result differs, a delta for a version the server does not hold, a
 * truncated compressed file and a zstd bomb each fall back (or refuse, with
 * the served index kept) and say why; an older publisher's manifest (no
 * transfers) is pulled plain, and a puller of today verifies a new manifest.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { $ } from 'bun';
import { IndexPuller } from '../../src/index/pull/index-puller.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { PUBLISHED_INDEX, PUBLISHED_MANIFEST, publishIndex, sha256OfFile } from '../../src/index/publish/publish.ts';
import { signManifest, type PublishedManifest } from '../../src/index/publish/signed-manifest.ts';
import { readPublicKey, readSigningKey, writeSigningKeyPair } from '../../src/index/publish/signing-keys.ts';
import { makeDelta, xdelta3Path } from '../../src/index/publish/index-delta.ts';
import { NGINX, startNginx, type Nginx } from '../helpers/nginx.ts';
import { datacenterIndex, daysAgo } from '../helpers/small-build.ts';

const XDELTA3 = xdelta3Path();
const ZSTD = Bun.which('zstd');
const run = (NGINX !== null && XDELTA3 !== null && ZSTD !== null) || !!process.env.CI;
if (!run) console.log('pull-transfers: skipped (needs nginx-light, xdelta3 and zstd; .ci/run installs them)');

/** The three versions' lists: v2 adds a /24, v3 drops one and adds another. */
const LISTS = {
  v1: ['203.0.113.0/24', '198.51.100.0/24', '192.0.2.0/24'],
  v2: ['203.0.113.0/24', '198.51.100.0/24', '192.0.2.0/24', '100.64.0.0/24'],
  v3: ['203.0.113.0/24', '192.0.2.0/24', '100.64.0.0/24', '233.252.0.0/24'],
};

describe.if(run)('pulling a new version by delta or compressed copy', () => {
  let work: string;
  let root: string;
  let nginx: Nginx;
  let key: ReturnType<typeof readSigningKey>;
  let pubPath: string;
  const builds: Record<string, string> = {};
  const manifests: Record<string, PublishedManifest> = {};
  let v0BuiltAt: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'ipintel-pull-transfers-'));
    root = join(work, 'www');
    mkdirSync(join(root, 'pub'), { recursive: true });
    const keys = writeSigningKeyPair(join(work, 'key'));
    key = readSigningKey(keys.keyPath);
    pubPath = keys.pubPath;
    v0BuiltAt = daysAgo(4);
    builds.v0 = await datacenterIndex(work, 'v0', ['198.18.0.0/24'], v0BuiltAt); // never published here
    builds.v1 = await datacenterIndex(work, 'v1', LISTS.v1, daysAgo(3));
    builds.v2 = await datacenterIndex(work, 'v2', LISTS.v2, daysAgo(2));
    builds.v3 = await datacenterIndex(work, 'v3', LISTS.v3, daysAgo(1));
    for (const v of ['v1', 'v2', 'v3']) manifests[v] = await publishIndex({ indexPath: builds[v]!, dir: join(root, 'pub'), privateKey: key, keep: 3, log: () => {} });
    nginx = await startNginx(root, join(work, 'nginx'));
  }, 180_000);
  afterAll(async () => {
    await nginx?.stop().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  }, 120_000);

  /** A copy of the published folder at /<name>/, for a case to damage. */
  const folder = (name: string) => {
    cpSync(join(root, 'pub'), join(root, name), { recursive: true });
    return join(root, name);
  };

  /** A puller of the folder /<name>/ whose server holds `holds` (verified against its own signed manifest), or nothing. */
  const serverOn = (name: string, id: string, holds: string | null, xdelta3: string | null = XDELTA3) => {
    const dir = join(work, 'servers', id);
    mkdirSync(dir, { recursive: true });
    const localPath = join(dir, 'ipintel.idx');
    const logs: string[] = [];
    if (holds) {
      copyFileSync(builds[holds]!, localPath);
      const { signature: _s, signature_all_fields: _a, deltas: _d, compressed: _c, ...v1 } = manifests.v1!;
      const m = manifests[holds] ?? signManifest({ ...v1, sha256: sha256OfFile(builds[holds]!), size: Bun.file(builds[holds]!).size, built_at: v0BuiltAt, file: 'versions/v0.idx' }, key);
      writeFileSync(`${localPath}.pulled.json`, JSON.stringify(m));
    }
    const puller = new IndexPuller({
      indexUrl: `${nginx.url}/${name}/${PUBLISHED_INDEX}`,
      publicKey: readPublicKey(pubPath),
      localPath,
      pollMs: 3_600_000,
      maxAgeMs: 30 * 86_400_000,
      swap: async () => {},
      log: (l) => logs.push(l),
      xdelta3,
    });
    if (holds) expect(puller.adoptLocal()).toBe(true);
    return { puller, localPath, logs };
  };

  /** Requests nginx logged for files under /<name>/versions/. */
  const versionGets = async (name: string) => (await nginx.requests()).filter((r) => r.startsWith(`GET /${name}/versions/`));

  test('the publisher lists a compressed copy and a delta from each kept version, under the second signature', () => {
    const m = manifests.v3!;
    expect(m.compressed?.format).toBe('zstd');
    expect(m.compressed!.size).toBeLessThan(m.size / 5);
    expect(sha256OfFile(join(root, 'pub', m.compressed!.file))).toBe(m.compressed!.sha256);
    expect(m.deltas!.map((d) => d.from_sha256).sort()).toEqual([manifests.v1!.sha256, manifests.v2!.sha256].sort());
    for (const d of m.deltas!) {
      expect(d.to_sha256).toBe(m.sha256);
      expect(sha256OfFile(join(root, 'pub', d.file))).toBe(d.sha256);
    }
    expect(typeof m.signature_all_fields).toBe('string');
    expect(manifests.v1!.deltas).toEqual([]); // nothing earlier to start from
  }, 120_000);

  test('a server on v1 pulls v3 by the v1→v3 delta, one on v2 by v2→v3, a fresh one by the compressed copy: all hold the v3 build', async () => {
    const want = sha256OfFile(builds.v3!);
    const onV1 = serverOn('pub', 'on-v1', 'v1');
    const onV2 = serverOn('pub', 'on-v2', 'v2');
    const fresh = serverOn('pub', 'fresh', null);
    const before = (await versionGets('pub')).length;
    for (const s of [onV1, onV2, fresh]) {
      expect(await s.puller.poll()).toBe('updated');
    }
    const got = (await versionGets('pub')).slice(before);
    const fromV1 = manifests.v3!.deltas!.find((d) => d.from_sha256 === manifests.v1!.sha256)!;
    const fromV2 = manifests.v3!.deltas!.find((d) => d.from_sha256 === manifests.v2!.sha256)!;
    expect(got).toEqual([`GET /pub/${fromV1.file} 200`, `GET /pub/${fromV2.file} 200`, `GET /pub/${manifests.v3!.compressed!.file} 200`]);
    expect(onV1.puller.status.last_transfer).toEqual({ method: 'delta', downloaded_bytes: fromV1.size, index_bytes: manifests.v3!.size, fallbacks: [] });
    expect(onV2.puller.status.last_transfer?.method).toBe('delta');
    expect(fresh.puller.status.last_transfer?.method).toBe('compressed');
    expect(fresh.puller.status.last_transfer?.downloaded_bytes).toBe(manifests.v3!.compressed!.size);
    expect(fresh.puller.status.downloaded_bytes).toEqual({ delta: 0, compressed: manifests.v3!.compressed!.size, plain: 0 });
    expect(onV1.logs.at(-1)).toMatch(/by delta, .* downloaded$/);
    // The very bytes of the build: every answer is the one a server that built v3 itself gives.
    const answer = (reader: IndexReader, ip: string) => {
      const hit = reader.lookup(ip);
      return hit && { rangeStart: hit.rangeStart, rangeEnd: hit.rangeEnd, record: hit.record };
    };
    const reference = IndexReader.open(builds.v3!);
    const v1 = IndexReader.open(builds.v1!);
    expect(JSON.stringify(answer(v1, '198.51.100.7'))).not.toBe(JSON.stringify(answer(reference, '198.51.100.7'))); // the edits show in answers
    for (const s of [onV1, onV2, fresh]) {
      expect(sha256OfFile(s.localPath)).toBe(want);
      const reader = IndexReader.open(s.localPath);
      for (const ip of ['198.51.100.7', '233.252.0.7', '100.64.0.7', '203.0.113.7', '8.8.8.8']) {
        expect(JSON.stringify(answer(reader, ip))).toBe(JSON.stringify(answer(reference, ip)));
      }
    }
  }, 120_000);

  test('a corrupted delta falls back to the compressed copy and says why', async () => {
    const dir = folder('corrupt-delta');
    const delta = manifests.v3!.deltas!.find((d) => d.from_sha256 === manifests.v1!.sha256)!;
    const bytes = readFileSync(join(dir, delta.file));
    bytes[bytes.length >> 1]! ^= 0xff;
    writeFileSync(join(dir, delta.file), bytes);
    const s = serverOn('corrupt-delta', 'corrupt-delta', 'v1');
    expect(await s.puller.poll()).toBe('updated');
    expect(sha256OfFile(s.localPath)).toBe(manifests.v3!.sha256);
    expect(s.puller.status.last_transfer?.method).toBe('compressed');
    expect(s.puller.status.last_transfer?.fallbacks).toEqual(['delta: delta sha256 differs from its signed manifest']);
    expect(s.logs.at(-1)).toMatch(/by compressed, .*not cheaper because delta: delta sha256 differs/);
  }, 120_000);

  /** A folder whose manifest lists, signed, `make(deltaPath)`'s delta from v1 instead of the publisher's. */
  const signedDeltaFolder = async (name: string, make: (path: string) => Promise<void> | void) => {
    const dir = folder(name);
    const path = join(dir, 'versions', `${name}.vcdiff`);
    await make(path);
    const { signature: _s, signature_all_fields: _a, ...body } = manifests.v3!;
    const deltas = [{ file: `versions/${name}.vcdiff`, format: 'vcdiff' as const, from_sha256: manifests.v1!.sha256, to_sha256: body.sha256, size: Bun.file(path).size, sha256: sha256OfFile(path) }];
    writeFileSync(join(dir, PUBLISHED_MANIFEST), JSON.stringify(signManifest({ ...body, deltas }, key)));
  };

  test('a signed delta whose result is not the signed index falls back, never served', async () => {
    // A publisher bug: the delta listed from v1 makes v2, not v3 (its own hash and size are signed and right).
    await signedDeltaFolder('wrong-delta', (path) => makeDelta(XDELTA3!, builds.v1!, builds.v2!, path, { maxOutputBytes: 1 << 30, timeoutMs: 60_000 }));
    const s = serverOn('wrong-delta', 'wrong-delta', 'v1');
    expect(await s.puller.poll()).toBe('updated');
    expect(sha256OfFile(s.localPath)).toBe(manifests.v3!.sha256);
    expect(s.puller.status.last_transfer?.method).toBe('compressed');
    expect(s.puller.status.last_transfer?.fallbacks[0]).toMatch(/^delta: index (sha256 differs from|is \d+ bytes; its) signed manifest/);
  }, 120_000);

  test('a signed delta xdelta3 cannot apply (its exit, as a write error on a full disk ends it) falls back', async () => {
    await signedDeltaFolder('garbage-delta', (path) => writeFileSync(path, Buffer.alloc(4096, 0x5a)));
    const s = serverOn('garbage-delta', 'garbage-delta', 'v1');
    expect(await s.puller.poll()).toBe('updated');
    expect(sha256OfFile(s.localPath)).toBe(manifests.v3!.sha256);
    expect(s.puller.status.last_transfer?.method).toBe('compressed');
    expect(s.puller.status.last_transfer?.fallbacks[0]).toMatch(/^delta: xdelta3 failed \(exit \d+\)/);
  }, 120_000);

  test('a signed delta whose output runs past the index size is stopped there and falls back', async () => {
    const padded = join(work, 'v3-padded.idx');
    writeFileSync(padded, Buffer.concat([readFileSync(builds.v3!), Buffer.alloc(1 << 20)]));
    await signedDeltaFolder('long-delta', (path) => makeDelta(XDELTA3!, builds.v1!, padded, path, { maxOutputBytes: 1 << 30, timeoutMs: 60_000 }));
    const s = serverOn('long-delta', 'long-delta', 'v1');
    expect(await s.puller.poll()).toBe('updated');
    expect(sha256OfFile(s.localPath)).toBe(manifests.v3!.sha256);
    expect(s.puller.status.last_transfer?.method).toBe('compressed');
    expect(s.puller.status.last_transfer?.fallbacks[0]).toMatch(new RegExp(`^delta: xdelta3 failed \\(output past ${manifests.v3!.size} bytes\\)`));
  }, 120_000);

  test('a server holding a version no delta starts from takes the compressed copy', async () => {
    const s = serverOn('pub', 'on-v0', 'v0');
    expect(await s.puller.poll()).toBe('updated');
    expect(sha256OfFile(s.localPath)).toBe(manifests.v3!.sha256);
    expect(s.puller.status.last_transfer?.method).toBe('compressed');
    expect(s.puller.status.last_transfer?.fallbacks).toEqual([`delta: no delta from the served version ${sha256OfFile(builds.v0!).slice(0, 12)}`]);
  }, 120_000);

  test('without xdelta3 a server on v2 takes the compressed copy and says xdelta3 is missing', async () => {
    const s = serverOn('pub', 'no-xdelta3', 'v2', null);
    expect(s.logs[0]).toMatch(/xdelta3 is not installed/);
    expect(await s.puller.poll()).toBe('updated');
    expect(s.puller.status.last_transfer?.method).toBe('compressed');
    expect(s.puller.status.last_transfer?.fallbacks).toEqual(['delta: xdelta3 is not installed (apt-get install xdelta3): no deltas, full files only']);
  }, 120_000);

  test('a truncated compressed file falls back to the plain file', async () => {
    const dir = folder('truncated-zst');
    truncateSync(join(dir, manifests.v3!.compressed!.file), manifests.v3!.compressed!.size - 100);
    const s = serverOn('truncated-zst', 'truncated-zst', null);
    expect(await s.puller.poll()).toBe('updated');
    expect(sha256OfFile(s.localPath)).toBe(manifests.v3!.sha256);
    expect(s.puller.status.last_transfer?.method).toBe('plain');
    expect(s.puller.status.last_transfer?.fallbacks).toContain(`compressed: compressed file truncated: ${manifests.v3!.compressed!.size - 100} of ${manifests.v3!.compressed!.size} bytes`);
    expect(s.puller.status.last_transfer?.downloaded_bytes).toBe(manifests.v3!.compressed!.size - 100 + manifests.v3!.size);
  }, 120_000);

  test('a signed compressed file expanding past the index size (a zstd bomb) is refused; with no plain file the served index stays', async () => {
    const dir = folder('bomb');
    const bomb = join(dir, 'versions', 'bomb.zst');
    const size = manifests.v3!.size;
    await $`head -c ${size * 4} /dev/zero | ${ZSTD!} -q -c -1 > ${bomb}`;
    const { signature: _s, signature_all_fields: _a, deltas: _d, ...body } = manifests.v3!;
    const compressed = { file: 'versions/bomb.zst', format: 'zstd' as const, size: Bun.file(bomb).size, sha256: sha256OfFile(bomb) };
    writeFileSync(join(dir, PUBLISHED_MANIFEST), JSON.stringify(signManifest({ ...body, compressed, deltas: [] }, key)));
    rmSync(join(dir, manifests.v3!.file));
    const s = serverOn('bomb', 'bomb', 'v2');
    expect(await s.puller.poll()).toBe('failed');
    expect(sha256OfFile(s.localPath)).toBe(manifests.v2!.sha256);
    expect(s.puller.status.sha256).toBe(manifests.v2!.sha256);
    expect(s.puller.status.last_error).toMatch(/^index answered HTTP 404 .*\(compressed: compressed file expands past the index's declared \d+ bytes\)/);
    expect(s.puller.status.last_error).toMatch(/\(delta: the manifest lists no deltas\)/);
    expect(require('node:fs').readdirSync(join(work, 'servers', 'bomb')).filter((n: string) => n.includes('.pull-'))).toEqual([]);
  }, 120_000);

  test("an older publisher's manifest (no transfers) is pulled plain, as today", async () => {
    const dir = folder('old-publisher');
    const { signature: _s, signature_all_fields: _a, deltas: _d, compressed: _c, ...body } = manifests.v3!;
    writeFileSync(join(dir, PUBLISHED_MANIFEST), JSON.stringify(signManifest(body, key)));
    const s = serverOn('old-publisher', 'old-publisher', 'v1');
    const before = (await versionGets('old-publisher')).length;
    expect(await s.puller.poll()).toBe('updated');
    expect(sha256OfFile(s.localPath)).toBe(manifests.v3!.sha256);
    expect((await versionGets('old-publisher')).slice(before)).toEqual([`GET /old-publisher/${manifests.v3!.file} 200`]);
    expect(s.puller.status.last_transfer?.method).toBe('plain');
    expect(s.puller.status.last_transfer?.fallbacks).toEqual(['delta: the manifest lists no deltas', 'compressed: the manifest lists no compressed file']);
  }, 120_000);

  test('transfer fields whose second signature does not verify refuse the manifest', async () => {
    const dir = folder('forged-transfers');
    writeFileSync(join(dir, PUBLISHED_MANIFEST), JSON.stringify({ ...manifests.v3!, deltas: [] }));
    const s = serverOn('forged-transfers', 'forged-transfers', 'v1');
    expect(await s.puller.poll()).toBe('failed');
    expect(s.puller.status.last_error).toMatch(/signature_all_fields does not verify/);
    expect(sha256OfFile(s.localPath)).toBe(manifests.v1!.sha256);
  }, 120_000);

  test("a puller of today (main's signed-manifest.ts) verifies a manifest with transfers", async () => {
    const old = join(work, 'old-signed-manifest.ts');
    // The last commit before transfers were added (9a73542, main on 2026-11-28).
    const text = (await $`git show 9a73542:src/index/publish/signed-manifest.ts`.cwd(import.meta.dir).quiet().nothrow()).stdout.toString();
    if (!text.includes('export function verifyManifest')) {
      console.log('pull-transfers: no history to take the old signed-manifest.ts from (a shallow clone): compatibility check skipped');
      return;
    }
    expect(text).not.toContain('signature_all_fields');
    writeFileSync(old, text);
    const { verifyManifest } = (await import(old)) as { verifyManifest: (t: string, k: unknown) => { sha256: string; file: string } };
    const m = verifyManifest(readFileSync(join(root, 'pub', PUBLISHED_MANIFEST), 'utf8'), readPublicKey(pubPath));
    expect(m.sha256).toBe(manifests.v3!.sha256);
    expect(m.file).toBe(manifests.v3!.file);
  }, 120_000);
});
