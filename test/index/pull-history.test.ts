/**
 * A puller fetching its publisher's history (issue 39) through a real nginx
 * on 127.0.0.1: the publisher publishes v1, v2, v3 at known moments and
 * records each into its history; a puller that followed from v2 fetches only
 * what v3 brought, a fresh one the whole history, and `?at=` in each
 * version's publish period answers on the pullers byte for byte what it
 * answers over the publisher's own history, and what a server serving that
 * version says. A tampered pack or recipe, a pack larger than declared and a
 * history manifest edited after signing are refused with the previous
 * history kept and the reason in the status; an older publisher's manifest
 * (no history) and a puller with IPINTEL_HISTORY=off fetch none.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { pack as msgpack, unpack } from 'msgpackr';
import { loadConfig } from '../../src/config.ts';
import { prepareServer, type RunningServer } from '../../src/host/start-server.ts';
import { HistoryJobs } from '../../src/index/history/jobs.ts';
import { recordPublishedIndex, recordServedIndexes } from '../../src/index/history/recorder.ts';
import type { RecordOutcome } from '../../src/index/history/job-runner.ts';
import { rebuildVersion } from '../../src/index/history/rebuild.ts';
import { readCatalog, recordVersion } from '../../src/index/history/store.ts';
import { IndexHolder } from '../../src/index/holder.ts';
import { parseHistoryManifest, type HistoryManifest } from '../../src/index/history/history-manifest.ts';
import { IndexPuller } from '../../src/index/pull/index-puller.ts';
import { readPullStatus } from '../../src/index/pull/pull-status-file.ts';
import { PUBLISHED_INDEX, PUBLISHED_MANIFEST, publishIndex } from '../../src/index/publish/publish.ts';
import { signManifest, type PublishedManifest } from '../../src/index/publish/signed-manifest.ts';
import { readPublicKey, readSigningKey, writeSigningKeyPair } from '../../src/index/publish/signing-keys.ts';
import { NGINX, startNginx, type Nginx } from '../helpers/nginx.ts';
import { datacenterIndex } from '../helpers/small-build.ts';
import { call } from '../http/support.ts';

const run = NGINX !== null || !!process.env.CI;
if (!run) console.log('pull-history: skipped (needs nginx-light; .ci/run installs it)');

const DAY = 86_400_000;
const HOUR = 3_600_000;
/** Publish moments, whole seconds, days ago: every one inside a 30-day history and the pull's age window. */
const T1 = Math.floor((Date.now() - 4 * DAY) / 1000) * 1000;
const T2 = T1 + DAY;
const T3 = T2 + DAY;
const iso = (ms: number) => new Date(ms).toISOString();
const LISTS = {
  v1: ['203.0.113.0/24', '198.51.100.0/24', '192.0.2.0/24'],
  v2: ['203.0.113.0/24', '198.51.100.0/24', '192.0.2.0/24', '100.64.0.0/24'],
  v3: ['203.0.113.0/24', '192.0.2.0/24', '100.64.0.0/24', '233.252.0.0/24'],
  /** Never published: a version a puller serves before its publisher's history holds it. */
  v4: ['203.0.113.0/24', '192.0.2.0/24', '100.64.0.0/24', '233.252.0.0/24', '198.18.0.0/24'],
};
const IPS = ['198.51.100.7', '100.64.0.7', '233.252.0.7'];
/** A moment inside each version's publish period, and the version then published. */
const MOMENTS: [number, 'v1' | 'v2' | 'v3'][] = [
  [T1, 'v1'],
  [T1 + 5 * HOUR, 'v1'],
  [T2 - 1000, 'v1'],
  [T2, 'v2'],
  [T2 + 12 * HOUR, 'v2'],
  [T3 + HOUR, 'v3'],
];

describe.if(run)("a puller fetching its publisher's history", () => {
  let work: string;
  let root: string;
  let nginx: Nginx;
  let key: ReturnType<typeof readSigningKey>;
  let pubPath: string;
  const publisherJobs = new HistoryJobs();
  const publisherHistory = () => join(work, 'publisher-history');
  const builds: Record<string, string> = {};
  const manifests: Record<string, PublishedManifest> = {};
  const servers: RunningServer[] = [];
  const pullers: IndexPuller[] = [];

  const publish = (v: 'v1' | 'v2' | 'v3', dir: string, at: number, history = true) =>
    publishIndex({
      indexPath: builds[v]!,
      dir,
      privateKey: key,
      keep: 3,
      xdelta3: null,
      log: () => {},
      now: () => at,
      history: history ? { dir: publisherHistory(), record: (path, ms) => recordPublishedIndex({ dir: publisherHistory(), retentionMs: 30 * DAY }, publisherJobs, path, ms) } : undefined,
    });

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'ipintel-pull-history-'));
    root = join(work, 'www');
    mkdirSync(join(root, 'pub'), { recursive: true });
    const keys = writeSigningKeyPair(join(work, 'key'));
    key = readSigningKey(keys.keyPath);
    pubPath = keys.pubPath;
    builds.v1 = await datacenterIndex(work, 'v1', LISTS.v1, iso(T1 - HOUR));
    builds.v2 = await datacenterIndex(work, 'v2', LISTS.v2, iso(T2 - HOUR));
    builds.v3 = await datacenterIndex(work, 'v3', LISTS.v3, iso(T3 - HOUR));
    builds.v4 = await datacenterIndex(work, 'v4', LISTS.v4, iso(T3));
    nginx = await startNginx(root, join(work, 'nginx'));
  }, 180_000);
  afterAll(async () => {
    for (const p of pullers) await p.close();
    for (const s of servers) await s.stop();
    publisherJobs.close();
    await nginx?.stop().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  }, 120_000);

  /** A puller of /<folder>/ into servers/<id>/, with a 30-day history there unless `history` is false; `swap` as the host's. */
  const pullerOf = (folder: string, id: string, history = true, swap: (path: string) => Promise<void> = async () => {}) => {
    const dir = join(work, 'servers', id);
    mkdirSync(dir, { recursive: true });
    const logs: string[] = [];
    const historyDir = join(dir, 'history');
    const puller = new IndexPuller({
      indexUrl: `${nginx.url}/${folder}/${PUBLISHED_INDEX}`,
      publicKey: readPublicKey(pubPath),
      localPath: join(dir, 'ipintel.idx'),
      pollMs: 3_600_000,
      maxAgeMs: 30 * DAY,
      swap,
      log: (l) => logs.push(l),
      xdelta3: null,
      writeStatus: true,
      history: history ? { config: { dir: historyDir, retentionMs: 30 * DAY }, jobs: new HistoryJobs() } : undefined,
    });
    pullers.push(puller);
    return { puller, dir, historyDir, localPath: join(dir, 'ipintel.idx'), logs };
  };

  /** A server over `index` with the history at `historyDir` (off: none), recording nothing, its clock after v3; and a key that may ask `at`. */
  const serverOver = async (index: string, historyDir: string | null, env: Record<string, string> = {}) => {
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      IPINTEL_INDEX: index,
      IPINTEL_DB: ':memory:',
      IPINTEL_DNS_SERVERS: '127.0.0.1:9',
      IPINTEL_FEEDS_REFRESH: 'off',
      IPINTEL_RATE_LIMITS: 'off',
      IPINTEL_HISTORY: historyDir ? '30d' : 'off',
      ...(historyDir ? { IPINTEL_HISTORY_DIR: historyDir } : {}),
      ...env,
    });
    const server = (await prepareServer(config, { now: () => T3 + DAY }, { recordsHistory: false })).listen();
    servers.push(server);
    const { user } = await server.services.accounts.signIn({ provider: 'oidc', subject: 'h', email: 'h@example.test', emailVerified: true, name: 'H' });
    const apiKey = (await server.services.accounts.createKey(user.id, 'history', 'free')).secret;
    return { server, ask: (path: string) => call(server.url, path, { headers: { 'x-api-key': apiKey } }) };
  };

  const historyGets = async (folder: string) => (await nginx.requests()).filter((r) => r.startsWith(`GET /${folder}/history/`));
  const historyOf = (m: PublishedManifest): HistoryManifest => JSON.parse(readFileSync(join(root, 'pub', m.history!.file), 'utf8'));
  const sumPacks = (h: HistoryManifest) => Object.entries(h.files).reduce((s, [n, f]) => s + (n.endsWith('.pack') ? f.size : 0), 0);

  /**
   * A puller whose swaps go to an index holder with the server's recorder on
   * it (what a pulling server's recording worker does): each swap waits for
   * the recording it starts, as a recorder quicker than the publisher's
   * history would. `outcomes` are what the recorder wrote.
   */
  const recordingPullerOf = (folder: string, id: string) => {
    const outcomes: RecordOutcome[] = [];
    const failures: string[] = [];
    const jobs = new HistoryJobs();
    recorderJobs.push(jobs);
    let holder: IndexHolder | null = null;
    let recorded = async () => {};
    const p = pullerOf(folder, id, true, async (path) => {
      if (holder) holder.reload(path);
      else {
        holder = IndexHolder.open(path);
        recorded = recordServedIndexes(holder, { dir: join(work, 'servers', id, 'history'), retentionMs: 30 * DAY }, jobs, Date.now, { recorded: (o) => void outcomes.push(o), failed: (m) => void failures.push(m) });
      }
      await recorded();
    });
    return { ...p, outcomes, failures };
  };
  const recorderJobs: HistoryJobs[] = [];
  afterAll(() => recorderJobs.forEach((j) => j.close()));

  let follower: ReturnType<typeof recordingPullerOf>;
  let fresh: ReturnType<typeof pullerOf>;

  test('the publisher lists every version it published, at the moment of its publish, under the second signature', async () => {
    manifests.v1 = await publish('v1', join(root, 'pub'), T1);
    manifests.v2 = await publish('v2', join(root, 'pub'), T2);
    // A puller following from v2 holds v1 and v2's history before v3 is published.
    follower = recordingPullerOf('pub', 'follower');
    expect(await follower.puller.poll()).toBe('updated');
    expect(follower.puller.status.history?.versions).toBe(2);
    // Kept for a puller whose next history is refused (below).
    cpSync(follower.historyDir, join(work, 'follower-history-at-v2'), { recursive: true });
    manifests.v3 = await publish('v3', join(root, 'pub'), T3);
    const h = historyOf(manifests.v3);
    expect(h.versions.map((v) => [v.sha256, v.published_from])).toEqual([
      [manifests.v1.sha256, iso(T1)],
      [manifests.v2.sha256, iso(T2)],
      [manifests.v3.sha256, iso(T3)],
    ]);
    expect(h.versions.map((v) => v.built_at)).toEqual([manifests.v1.built_at, manifests.v2.built_at, manifests.v3.built_at]);
    expect(manifests.v3.history?.format).toBe('ipintel-history-1');
    // Format 2: recipes list transformed ranges, which a puller of format 1 refuses by the number (saying so) instead of rebuilding wrong bytes and refusing them by their sha256.
    expect(h.format).toBe(2);
    const text = readFileSync(join(root, 'pub', manifests.v3.history!.file), 'utf8');
    expect(parseHistoryManifest(text.replace('"format":2', '"format":1'), Date.now()).versions).toHaveLength(3); // an older publisher's
    expect(() => parseHistoryManifest(text.replace('"format":2', '"format":3'), Date.now())).toThrow('the history manifest is not format 1 or 2');
    expect(typeof manifests.v3.signature_all_fields).toBe('string');
    // The published folder holds exactly the files the history manifest names (the earlier manifest's went when this one was in place).
    expect(readdirSync(join(root, 'pub', 'history')).sort()).toEqual([manifests.v3.history!.file.slice('history/'.length), ...Object.keys(h.files)].sort());
  }, 120_000);

  test('a following puller fetches only what the new version brought; a fresh one the whole history, and says what it cost', async () => {
    const h = historyOf(manifests.v3);
    const before = (await historyGets('pub')).length;
    expect(await follower.puller.poll()).toBe('updated');
    const got = (await historyGets('pub')).slice(before);
    const v3 = h.versions[2];
    expect(got.sort()).toEqual([manifests.v3.history!.file, `history/${v3.recipe}`, ...v3.packs.filter((p) => p.startsWith(v3.sha256.slice(0, 32))).map((p) => `history/${p}.pack`)].map((f) => `GET /pub/${f} 200`).sort());
    expect(follower.puller.status.history).toMatchObject({ adopted_sha256: manifests.v3.history!.sha256, versions: 3, last_error: null });
    // The server's recorder wrote nothing of its own for v2 or v3 (the publisher's history holds them), and the folder holds only the publisher's files.
    expect(follower.failures).toEqual([]);
    expect(follower.outcomes.map((o) => [o?.recorded, o?.bytesWritten])).toEqual([[false, 0], [false, 0]]);
    expect(readdirSync(follower.historyDir).filter((n) => n.endsWith('.pack') || n.endsWith('.recipe')).sort()).toEqual(Object.keys(h.files).sort());
    expect(existsSync(join(follower.historyDir, 'deferred-recording.json'))).toBe(false);

    fresh = pullerOf('pub', 'fresh');
    expect(await fresh.puller.poll()).toBe('updated');
    const status = fresh.puller.status.history!;
    expect(status).toMatchObject({ adopted_sha256: manifests.v3.history!.sha256, versions: 3, last_error: null });
    const files = Object.values(h.files).reduce((s, f) => s + f.size, 0);
    expect(status.downloaded_bytes).toBe(files + manifests.v3.history!.size);
    expect(fresh.logs.at(-1)).toMatch(/history adopted \(3 versions, \d+ files fetched, 3 versions checked/);
    // What /v1/data/status shows (admin), read from the status file every worker reads.
    expect(readPullStatus(fresh.localPath)?.history?.adopted_sha256).toBe(manifests.v3.history!.sha256);
    const index = statSync(builds.v3!).size;
    console.log(`pull-history: a fresh puller downloaded ${status.downloaded_bytes} bytes for the history of 3 versions (packs ${sumPacks(h)} bytes, recipes and history manifest the rest; one index is ${index} bytes, its zstd copy ${manifests.v3.compressed?.size} bytes)`);
  }, 120_000);

  test('?at= in each publish period answers on the pullers what it answers over the publisher history and what that version says', async () => {
    const publisher = await serverOver(builds.v3!, publisherHistory());
    const onFresh = await serverOver(fresh.localPath, fresh.historyDir);
    const onFollower = await serverOver(follower.localPath, follower.historyDir);
    const direct = { v1: await serverOver(builds.v1!, null), v2: await serverOver(builds.v2!, null), v3: await serverOver(builds.v3!, null) };
    for (const [at, v] of MOMENTS) {
      for (const ip of IPS) {
        const path = `/v1/ip/${ip}?at=${encodeURIComponent(iso(at))}`;
        const want = await publisher.ask(path);
        expect(want.status).toBe(200);
        for (const s of [onFresh, onFollower]) {
          const got = await s.ask(path);
          expect(got.status).toBe(200);
          expect(got.text).toBe(want.text);
          expect(got.headers.get('x-data-as-of')).toBe(want.headers.get('x-data-as-of'));
        }
        const { as_of, ...body } = JSON.parse(want.text);
        expect(JSON.stringify(body)).toBe((await direct[v].ask(`/v1/ip/${ip}`)).text);
        expect(as_of.data_as_of).toBe(manifests[v]!.built_at);
      }
    }
    // Before the first publish: the documented error on both.
    const early = `/v1/ip/${IPS[0]}?at=${encodeURIComponent(iso(T1 - 1000))}`;
    expect((await onFresh.ask(early)).status).toBe(422);
    expect((await publisher.ask(early)).status).toBe(422);
  }, 120_000);

  /** A copy of the published folder at /<name>/ for a case to damage, and its history manifest. */
  const folder = (name: string) => {
    cpSync(join(root, 'pub'), join(root, name), { recursive: true });
    return { dir: join(root, name), history: historyOf(manifests.v3) };
  };

  /** A puller of /<name>/ whose history is the fresh puller's as of v2 (v1 and v2 adopted), and that history's catalog. */
  const pullerWithPreviousHistory = (name: string, id: string) => {
    const p = pullerOf(name, id);
    cpSync(follower.historyDir, p.historyDir, { recursive: true });
    // Nothing of the publisher's is held: every file is fetched (and checked) again.
    rmSync(join(p.historyDir, 'publisher-history.json'));
    return { ...p, catalog: readFileSync(join(p.historyDir, 'catalog.json'), 'utf8') };
  };

  /** Polls; the index is pulled and served, the history refused for `reason` and left as it was. */
  const expectRefused = async (p: ReturnType<typeof pullerWithPreviousHistory>, reason: RegExp) => {
    expect(await p.puller.poll()).toBe('updated');
    expect(p.puller.status.sha256).toBe(manifests.v3!.sha256);
    expect(p.puller.status.history?.adopted_sha256).toBeNull();
    expect(p.puller.status.history?.last_error).toMatch(reason);
    expect(readPullStatus(p.localPath)?.history?.last_error).toMatch(reason);
    expect(p.logs.filter((l) => l.includes('history refused'))).toHaveLength(1);
    expect(readFileSync(join(p.historyDir, 'catalog.json'), 'utf8')).toBe(p.catalog);
  };

  test("a pack changed after signing is refused at its download (its sha256), the previous history kept", async () => {
    const { dir, history } = folder('tampered-pack');
    const packName = Object.keys(history.files).find((n) => n.endsWith('.pack'))!;
    const path = join(dir, 'history', packName);
    const bytes = readFileSync(path);
    bytes[bytes.length >> 1] ^= 0xff;
    writeFileSync(path, bytes);
    const p = pullerWithPreviousHistory('tampered-pack', 'tampered-pack');
    await expectRefused(p, /history file .*\.pack sha256 differs from its signed manifest/);
    // The server over that puller's folder says why (admin), and still answers from the index pulled.
    const admin = 'admin-token-for-pull-history-0123456789';
    const { server, ask } = await serverOver(p.localPath, p.historyDir, { IPINTEL_INDEX_URL: `${nginx.url}/tampered-pack/${PUBLISHED_INDEX}`, IPINTEL_INDEX_PUBKEY: pubPath, IPINTEL_ADMIN_TOKEN: admin });
    const status = JSON.parse((await call(server.url, '/v1/data/status', { headers: { authorization: `Bearer ${admin}` } })).text);
    expect(status.history.error).toMatch(/^the publisher's history was refused \(the previous history stays\): history file .*\.pack sha256 differs/);
    expect(status.index.built_at).toBe(manifests.v3!.built_at);
    expect((await ask(`/v1/ip/${IPS[2]}`)).status).toBe(200);
  }, 120_000);

  test('a puller whose publisher history is refused records the version it pulled itself (its recorder left it to the history)', async () => {
    const p = recordingPullerOf('tampered-pack', 'refused-records-own');
    cpSync(join(work, 'follower-history-at-v2'), p.historyDir, { recursive: true });
    rmSync(join(p.historyDir, 'publisher-history.json'));
    const before = Date.now();
    expect(await p.puller.poll()).toBe('updated');
    expect(p.puller.status.history?.last_error).toMatch(/sha256 differs from its signed manifest/);
    expect(p.outcomes.map((o) => [o?.recorded, o?.bytesWritten])).toEqual([[false, 0]]);
    const catalog = JSON.parse(readFileSync(join(p.historyDir, 'catalog.json'), 'utf8')) as { versions: { id: string; servedFromMs: number }[] };
    expect(catalog.versions.map((v) => v.id)).toEqual([manifests.v1!.sha256, manifests.v2!.sha256, manifests.v3!.sha256]);
    expect(catalog.versions[2].servedFromMs).toBeGreaterThanOrEqual(before);
    expect(p.logs.some((l) => l.includes('recorded it into this server\'s history'))).toBe(true);
    expect(existsSync(join(p.historyDir, 'deferred-recording.json'))).toBe(false);
  }, 120_000);

  test('a pack this server recorded under the name of one it then fetches (the same version at the same millisecond) is set aside: its own later version still rebuilds', async () => {
    const p = pullerOf('pub', 'same-pack-name');
    cpSync(join(work, 'follower-history-at-v2'), p.historyDir, { recursive: true });
    // This server recorded v3 at the millisecond the publisher published it, then v4 (never published), drawing on v3's pack.
    recordVersion(p.historyDir, builds.v3!, T3);
    recordVersion(p.historyDir, builds.v4!, T3 + HOUR);
    const v3Pack = `${manifests.v3!.sha256.slice(0, 32)}-${T3}`;
    expect(historyOf(manifests.v3!).versions[2].packs).toContain(v3Pack);
    expect(readCatalog(p.historyDir).packs[v3Pack]).toBeDefined();
    expect(await p.puller.poll()).toBe('updated');
    expect(p.puller.status.history).toMatchObject({ adopted_sha256: manifests.v3!.history!.sha256, versions: 3, last_error: null });
    const catalog = readCatalog(p.historyDir);
    const v4Sha = new Bun.CryptoHasher('sha256').update(readFileSync(builds.v4!)).digest('hex');
    expect(catalog.versions.map((v) => v.id)).toEqual([manifests.v1!.sha256, manifests.v2!.sha256, manifests.v3!.sha256, v4Sha]);
    for (const [i, v] of (['v1', 'v2', 'v3', 'v4'] as const).entries()) {
      const out = join(work, `same-pack-name-${v}.idx`);
      rebuildVersion(p.historyDir, catalog, catalog.versions[i], out);
      expect(Buffer.compare(readFileSync(out), readFileSync(builds[v]!))).toBe(0);
    }
  }, 120_000);

  test('a pack larger than declared is refused as it streams', async () => {
    const { dir, history } = folder('long-pack');
    const packName = Object.keys(history.files).find((n) => n.endsWith('.pack'))!;
    appendFileSync(join(dir, 'history', packName), Buffer.alloc(4096, 1));
    await expectRefused(pullerWithPreviousHistory('long-pack', 'long-pack'), /history file .*\.pack larger than its manifest's \d+ bytes/);
  }, 120_000);

  test('a history manifest with a version added after signing is refused (not the signed size)', async () => {
    const { dir, history } = folder('added-version');
    const file = join(dir, manifests.v3!.history!.file);
    const extra = { ...history.versions[0], sha256: 'ab'.repeat(32), published_from: iso(T3 + 2 * HOUR) };
    writeFileSync(file, JSON.stringify({ ...history, versions: [...history.versions, extra] }));
    await expectRefused(pullerWithPreviousHistory('added-version', 'added-version'), /history manifest larger than its manifest's \d+ bytes/);
  }, 120_000);

  test('a history manifest whose version is changed in place (the same size) is refused: its sha256 is not the signed one', async () => {
    const { dir, history } = folder('edited-version');
    const file = join(dir, manifests.v3!.history!.file);
    const text = readFileSync(file, 'utf8');
    const from = history.versions[1].published_from;
    const edited = text.replace(from, iso(Date.parse(from) + 1000));
    expect(edited.length).toBe(text.length);
    writeFileSync(file, edited);
    await expectRefused(pullerWithPreviousHistory('edited-version', 'edited-version'), /history manifest sha256 differs from its signed manifest/);
  }, 120_000);

  test('a recipe changed and signed again (a publisher at fault) is refused: the version it rebuilds is not the signed sha256', async () => {
    const { dir, history } = folder('bad-recipe');
    const v2 = history.versions[1];
    const recipePath = join(dir, 'history', v2.recipe);
    const recipe = unpack(zstdDecompressSync(readFileSync(recipePath))) as { packs: string[]; runs: [number, number, number][] };
    // The same length from one byte further on: the bytes differ, the size does not.
    const run = recipe.runs.find((r) => r[2] > 1)!;
    run[2] -= 1;
    recipe.runs.push([run[0], run[1] + run[2], 1]);
    run[1] += 1;
    const bytes = zstdCompressSync(msgpack(recipe));
    writeFileSync(recipePath, bytes);
    history.files[v2.recipe] = { size: bytes.length, sha256: new Bun.CryptoHasher('sha256').update(bytes).digest('hex') };
    const text = `${JSON.stringify(history)}\n`;
    const name = `history/history-${new Bun.CryptoHasher('sha256').update(text).digest('hex').slice(0, 16)}.json`;
    writeFileSync(join(dir, name), text);
    const { signature: _s, signature_all_fields: _a, ...body } = manifests.v3!;
    const resigned = signManifest({ ...body, history: { ...body.history!, file: name, size: Buffer.byteLength(text), sha256: new Bun.CryptoHasher('sha256').update(text).digest('hex') } }, key);
    writeFileSync(join(dir, PUBLISHED_MANIFEST), JSON.stringify(resigned));
    await expectRefused(pullerWithPreviousHistory('bad-recipe', 'bad-recipe'), /rebuilt from the fetched files is not the index the signed manifest lists \(its sha256 differs\)/);
  }, 120_000);

  test("an older publisher's manifest (no history) is pulled as before and no history is fetched (until the publisher, upgraded, signs its version again with one); nor is any with IPINTEL_HISTORY=off", async () => {
    mkdirSync(join(root, 'old'));
    await publish('v1', join(root, 'old'), T1, false);
    const old = await publish('v2', join(root, 'old'), T2, false);
    expect(old.history).toBeUndefined();
    const p = pullerOf('old', 'of-old');
    expect(await p.puller.poll()).toBe('updated');
    expect(p.puller.status.history).toMatchObject({ adopted_sha256: null, last_error: null, downloaded_bytes: 0 });
    expect(existsSync(p.historyDir)).toBe(false); // left to the server's own recording, as before
    // The publisher upgraded: the version it publishes already is signed again with a history that starts with it.
    const upgradeHistory = { dir: join(work, 'upgraded-history'), retentionMs: 30 * DAY };
    const again = await publishIndex({ indexPath: builds.v2!, dir: join(root, 'old'), privateKey: key, keep: 3, xdelta3: null, log: () => {}, now: () => T3, history: { dir: upgradeHistory.dir, record: (path, ms) => recordPublishedIndex(upgradeHistory, publisherJobs, path, ms) } });
    expect(again.sha256).toBe(old.sha256);
    expect(again.history?.format).toBe('ipintel-history-1');
    expect(JSON.parse(readFileSync(join(root, 'old', again.history!.file), 'utf8')).versions.map((v: { sha256: string; published_from: string }) => [v.sha256, v.published_from])).toEqual([[old.sha256, iso(T3)]]);
    expect(await p.puller.poll()).toBe('unchanged');
    expect(p.puller.status.history).toMatchObject({ adopted_sha256: again.history!.sha256, versions: 1, last_error: null });
    const off = pullerOf('pub', 'history-off', false);
    const before = (await historyGets('pub')).length;
    expect(await off.puller.poll()).toBe('updated');
    expect(off.puller.status.history).toBeNull();
    expect((await historyGets('pub')).length).toBe(before);
  }, 120_000);
});
