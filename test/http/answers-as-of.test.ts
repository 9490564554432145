/**
 * Answers as of a past moment (issue 39): four small indexes swapped in at
 * known moments of a fixed clock (an operator replacing the file and calling
 * /reload, the refresher's swap, and a verified pull from a publisher), then `?at=` before, between and after
 * each swap answers what that index answered, through HTTP, the lookup
 * command and a restarted server; the edges answer the documented errors.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { holderTarget } from '../../src/feeds/start.ts';
import { startServer, type RunningServer } from '../../src/host/start-server.ts';
import { reloadServer } from '../../src/http/reload-server.ts';
import { IndexPuller } from '../../src/index/pull/index-puller.ts';
import { PUBLISHED_INDEX, publishIndex } from '../../src/index/publish/publish.ts';
import { readPublicKey, readSigningKey, writeSigningKeyPair } from '../../src/index/publish/signing-keys.ts';
import { buildFromTexts } from '../helpers/small-build.ts';
import { call, expectError } from './support.ts';

const DAY = 86_400_000;
const ADMIN = 'admin-token-for-history-tests-0123456789';
const DC_IP = '198.51.100.7';
const VPN_IP = '203.0.113.7';
const IPS = [DC_IP, VPN_IP];
const ROOT = resolve(import.meta.dir, '../..');

/** Five days ago, whole seconds: every moment of the test is in the past for the lookup command's real clock. */
const T0 = Math.floor((Date.now() - 5 * DAY) / 1000) * 1000;
const T1 = T0 + DAY;
const T2 = T0 + 2 * DAY;
const T3 = T0 + 3 * DAY;
const BUILT = [T0, T1, T2, T3].map((t) => t - 3_600_000);
const iso = (ms: number) => new Date(ms).toISOString();

const dir = mkdtempSync(join(tmpdir(), 'ipintel-history-'));
const live = join(dir, 'live.idx');
const historyDir = join(dir, 'history');
let clock = T0;
let server: RunningServer;
let key = '';
let proKey = '';
/** What each index answered for each address while it was served (no `at`). */
const said: Record<string, string>[] = [];
let paths: string[] = [];

const dcList = { type: 'cidr-list', name: 'dc.txt', text: '198.51.100.0/24\n', options: { category: 'datacenter', provider: 'alpha' } };
const vpnList = { type: 'cidr-list', name: 'vpn.txt', text: '203.0.113.0/24\n', options: { category: 'vpn', provider: 'beta' } };
const proxyList = { type: 'cidr-list', name: 'proxy.txt', text: '198.51.100.0/25\n', options: { category: 'proxy', provider: 'gamma' } };

function configFor(env: Record<string, string> = {}) {
  return loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    IPINTEL_INDEX: live,
    IPINTEL_DB: ':memory:',
    IPINTEL_DNS_SERVERS: '127.0.0.1:9',
    IPINTEL_FEEDS_REFRESH: 'off',
    IPINTEL_RATE_LIMITS: 'off',
    IPINTEL_ADMIN_TOKEN: ADMIN,
    IPINTEL_HISTORY: '30d',
    IPINTEL_HISTORY_DIR: historyDir,
    ...env,
  });
}

async function start(): Promise<void> {
  server = await startServer(configFor(), { now: () => clock });
  const { user } = await server.services.accounts.signIn({ provider: 'oidc', subject: 'history-user', email: 'h@example.test', emailVerified: true, name: 'H' });
  key = (await server.services.accounts.createKey(user.id, 'history', 'free')).secret;
  proKey = (await server.services.accounts.createKey(user.id, 'history-pro', 'pro')).secret;
}

/** The current answers of every address (no `at`), as the index in force says them. */
async function currentAnswers(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const ip of IPS) out[ip] = (await call(server.url, `/v1/ip/${ip}`)).text;
  return out;
}

const past = (path: string, headers: Record<string, string> = { 'x-api-key': key }) => call(server.url, path, { headers });

/** A past answer's body without `as_of`, and its as_of. */
function split(text: string): { body: string; asOf: Record<string, unknown> } {
  const parsed = JSON.parse(text) as Record<string, unknown>;
  const { as_of, ...rest } = parsed;
  return { body: JSON.stringify(rest), asOf: as_of as Record<string, unknown> };
}

beforeAll(async () => {
  paths = [
    await buildFromTexts(dir, 'a.idx', [dcList], iso(T0 - 3_600_000)),
    await buildFromTexts(dir, 'b.idx', [dcList, vpnList], iso(T1 - 3_600_000)), // a VPN range added
    await buildFromTexts(dir, 'c.idx', [vpnList], iso(T2 - 3_600_000)), // the datacenter range gone
    await buildFromTexts(dir, 'd.idx', [vpnList, proxyList], iso(T3 - 3_600_000)), // a proxy range added
  ];
  copyFileSync(paths[0], live);
  await start();
  await server.services.historyRecorded!();
  said.push(await currentAnswers());
  // T1: the operator rebuilt the file offline and replaced it, then /reload.
  clock = T1;
  copyFileSync(paths[1], `${live}.new`);
  renameSync(`${live}.new`, live);
  expect((await call(server.url, '/reload', { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } })).status).toBe(200);
  await server.services.historyRecorded!();
  said.push(await currentAnswers());
  // T2: the refresher's swap of its new build (it puts the build in place, then swaps: src/feeds/refresher.ts).
  clock = T2;
  copyFileSync(paths[2], `${live}.new`);
  renameSync(`${live}.new`, live);
  await holderTarget(server.services.index).swap(live);
  await server.services.historyRecorded!();
  said.push(await currentAnswers());
  // T3: a pull of a signed publish (the puller places the file, then the host reloads: src/host/start-pull.ts).
  clock = T3;
  const pub = join(dir, 'pub');
  mkdirSync(pub);
  const keys = writeSigningKeyPair(join(dir, 'signing'));
  await publishIndex({ indexPath: paths[3], dir: pub, privateKey: readSigningKey(keys.keyPath), keep: 3 });
  const files = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (r) => new Response(Bun.file(join(pub, new URL(r.url).pathname.slice(1)))) });
  const puller = new IndexPuller({
    indexUrl: `http://127.0.0.1:${files.port}/${PUBLISHED_INDEX}`,
    publicKey: readPublicKey(keys.pubPath),
    localPath: live,
    pollMs: 3_600_000,
    maxAgeMs: 30 * DAY,
    swap: async () => {
      await reloadServer(server.services);
    },
    log: () => {},
  });
  try {
    expect(await puller.poll()).toBe('updated');
  } finally {
    await puller.close();
    files.stop(true);
  }
  await server.services.historyRecorded!();
  said.push(await currentAnswers());
  clock = T3 + DAY;
}, 60_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Each moment asked and the index (0, 1, 2) that was served then. */
const MOMENTS: [string, number][] = [
  [iso(T0), 0],
  [iso(T0 + 12 * 3_600_000), 0],
  [iso(T1 - 1000), 0],
  [iso(T1), 1],
  [iso(T1 + 3_600_000).replace('Z', '+00:00'), 1],
  [iso(T2 - 1), 1],
  [iso(T2), 2],
  [iso(T2 + 3_600_000), 2],
  [iso(T3 - 1), 2],
  [iso(T3), 3],
  [iso(T3 + 60_000), 3],
];

async function expectPastAnswersMatch(): Promise<void> {
  for (const [at, version] of MOMENTS) {
    for (const ip of IPS) {
      const a = await past(`/v1/ip/${ip}?at=${encodeURIComponent(at)}`);
      expect(a.status).toBe(200);
      const { body, asOf } = split(a.text);
      expect(body).toBe(said[version][ip]);
      const builtAt = iso(BUILT[version]);
      expect(asOf).toEqual({ at: new Date(Date.parse(at)).toISOString(), data_as_of: builtAt, not_historical: ['crawler_dns_proof', 'rdap'] });
      expect(a.headers.get('x-data-as-of')).toBe(builtAt);
    }
  }
}

describe('answers as of a past moment', () => {
  test('the four indexes said different things (the test can tell them apart)', () => {
    const dc = said.map((s) => JSON.parse(s[DC_IP]).classification.is_datacenter);
    const proxy = said.map((s) => JSON.parse(s[DC_IP]).classification.is_proxy);
    const vpn = said.map((s) => JSON.parse(s[VPN_IP]).classification.is_vpn);
    expect(dc).toEqual([true, true, false, false]);
    expect(proxy).toEqual([false, false, false, true]);
    expect(vpn).toEqual([false, true, true, true]);
  });

  test('?at= before, between and after each swap answers exactly what the index served then said', async () => {
    await expectPastAnswersMatch();
  });

  test('a past answer is immutable: public, a year, an ETag, 304 for it', async () => {
    const a = await past(`/v1/ip/${DC_IP}?at=${iso(T0 + 1000)}`);
    expect(a.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const etag = a.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]+"$/);
    const again = await past(`/v1/ip/${DC_IP}?at=${iso(T0 + 1000)}`, { 'x-api-key': key, 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  test('a date means 00:00:00 UTC of that day', async () => {
    const day = iso(T1 + DAY).slice(0, 10);
    const a = await past(`/v1/ip/${VPN_IP}?at=${day}`);
    expect(a.status).toBe(200);
    expect(split(a.text).asOf.at).toBe(`${day}T00:00:00.000Z`);
  });

  test('fields project a past answer as they project a current one', async () => {
    const a = await past(`/v1/ip/${VPN_IP}?fields=ip,classification&at=${iso(T0 + 1000)}`);
    const parsed = JSON.parse(a.text);
    expect(Object.keys(parsed)).toEqual(['ip', 'classification', 'as_of']);
    expect(parsed.classification.is_vpn).toBe(false);
    // The same query again is still a past answer: only a current answer's query is kept as the
    // last one, which the pipeline answers without looking for `at` (ProjectionMemo.lastOf).
    const again = JSON.parse((await past(`/v1/ip/${VPN_IP}?fields=ip,classification&at=${iso(T0 + 1000)}`)).text);
    expect(again).toEqual(parsed);
  });

  test('/v1/assessment?at= answers from the index of that moment', async () => {
    const before = JSON.parse((await past(`/v1/assessment?ipv4=${VPN_IP}&at=${iso(T0 + 1000)}`)).text);
    const after = await past(`/v1/assessment?ipv4=${VPN_IP}&at=${iso(T1 + 1000)}`);
    expect(before.ipv4.is_vpn).toBe(false);
    expect(JSON.parse(after.text).ipv4.is_vpn).toBe(true);
    expect(after.headers.get('x-data-as-of')).toBe(iso(T1 - 3_600_000));
    expect(JSON.parse(after.text).as_of.data_as_of).toBe(iso(T1 - 3_600_000));
  });

  test('outside the history, in the future or unparseable: the documented errors, with the range', async () => {
    const before = expectError(await past(`/v1/ip/${DC_IP}?at=${iso(T0 - 1000)}`), 422, 'AT_OUT_OF_RANGE');
    expect(before).toMatchObject({ available_from: iso(T0), available_to: iso(T3 + DAY), retention: '30d' });
    expectError(await past(`/v1/ip/${DC_IP}?at=${iso(T3 + DAY + 1)}`), 422, 'AT_OUT_OF_RANGE');
    for (const bad of ['yesterday', '2026-02-30', '2026-11-03T25:00:00Z', '2026-11-03T10:00:00', '']) {
      expect(expectError(await past(`/v1/ip/${DC_IP}?at=${encodeURIComponent(bad)}`), 400, 'INVALID_AT').provided).toBe(bad);
    }
    expectError(await past(`/v1/ip/${DC_IP}?at=${iso(T0 + 1)}&at=${iso(T0 + 2)}`), 400, 'INVALID_AT');
    expectError(await past(`/v1/ip/not-an-ip?at=${iso(T0 + 1000)}`), 400, 'INVALID_IP');
  });

  test('the tier rule: an anonymous caller is told a key is needed', async () => {
    expectError(await past(`/v1/ip/${DC_IP}?at=${iso(T0 + 1000)}`, {}), 401, 'UNAUTHORIZED');
    expectError(await past(`/v1/assessment?ipv4=${DC_IP}&at=${iso(T0 + 1000)}`, {}), 401, 'UNAUTHORIZED');
  });

  test('a live part is not invented for the past: include=rdap_contacts is refused', async () => {
    expectError(await past(`/v1/ip/${DC_IP}?include=rdap_contacts&at=${iso(T0 + 1000)}`, { 'x-api-key': proKey }), 400, 'INVALID_INCLUDE');
  });

  test('/v1/data/status shows the retained range, versions and size', async () => {
    const status = JSON.parse((await call(server.url, '/v1/data/status')).text);
    expect(status.history).toMatchObject({ retention_seconds: 30 * 86_400, from: iso(T0), to: iso(T3 + DAY), versions: 4, readable: true });
    expect(status.history.size_bytes).toBeGreaterThan(0);
    expect(status.history.error).toBeUndefined();
  });

  test('the lookup command answers --at as the API does', async () => {
    for (const [at, version] of MOMENTS.filter((_, i) => i % 3 === 0)) {
      const proc = Bun.spawnSync([process.execPath, 'src/cli.ts', 'lookup', ...IPS, '--at', at, '--index', live], { cwd: ROOT, env: { ...process.env, IPINTEL_HISTORY_DIR: historyDir, IPINTEL_HISTORY: '30d' } });
      expect(proc.stderr.toString()).toBe('');
      const lines = proc.stdout.toString().trim().split('\n');
      expect(lines.map((l) => split(l).body)).toEqual(IPS.map((ip) => said[version][ip]));
      expect(split(lines[0]).asOf.data_as_of).toBe(iso(BUILT[version]));
    }
    const out = Bun.spawnSync([process.execPath, 'src/cli.ts', 'lookup', DC_IP, '--at', iso(T0 - DAY), '--index', live], { cwd: ROOT, env: { ...process.env, IPINTEL_HISTORY_DIR: historyDir } });
    expect(out.exitCode).toBe(1);
    expect(JSON.parse(out.stderr.toString()).code).toBe('AT_OUT_OF_RANGE');
  }, 60_000);

  test('bun run diff takes two moments as it takes two files', () => {
    const run = (a: string, b: string) => {
      const p = Bun.spawnSync([process.execPath, 'src/cli.ts', 'diff', a, b, '--format', 'json'], { cwd: ROOT, env: { ...process.env, IPINTEL_INDEX: live, IPINTEL_HISTORY_DIR: historyDir } });
      expect(p.stderr.toString()).toBe('');
      // The same comparison, named differently.
      return JSON.stringify(JSON.parse(p.stdout.toString()), (k, v) => (/path|^seconds$/i.test(k) ? undefined : v));
    };
    const byMoments = run(iso(T0 + 1000), iso(T2 + 1000));
    expect(byMoments).toBe(run(paths[0], paths[2]));
    expect(byMoments).not.toBe(run(paths[0], paths[1]));
  }, 60_000);

  test('after a restart the same moments answer the same, and the restart records nothing new', async () => {
    const versions = () => JSON.parse(readFileSync(join(historyDir, 'catalog.json'), 'utf8')).versions.length;
    await server.stop();
    await start();
    await server.services.historyRecorded!();
    expect(versions()).toBe(4);
    await expectPastAnswersMatch();
  }, 60_000);

  test('an index served but not (yet) recorded: moments since the last recorded swap are a 503, never an answer from the older index; the status says why', async () => {
    await server.stop();
    // The recording of the next index fails (no incoming/ folder can be made), as a full disk would make it.
    rmSync(join(historyDir, 'incoming'), { recursive: true, force: true });
    writeFileSync(join(historyDir, 'incoming'), 'not a folder');
    copyFileSync(paths[0], `${live}.new`);
    renameSync(`${live}.new`, live);
    try {
      await start();
      await server.services.historyRecorded!();
      expectError(await past(`/v1/ip/${DC_IP}?at=${iso(T3 + 60_000)}`), 503, 'SERVICE_UNAVAILABLE');
      const earlier = await past(`/v1/ip/${DC_IP}?at=${iso(T2 + 1000)}`);
      expect(split(earlier.text).body).toBe(said[2][DC_IP]);
      const status = JSON.parse((await call(server.url, '/v1/data/status', { headers: { authorization: `Bearer ${ADMIN}` } })).text);
      expect(status.history.readable).toBe(true);
      expect(status.history.error).toContain('history: cannot keep');
      expect((await call(server.url, `/v1/ip/${DC_IP}`)).text).toBe(said[0][DC_IP]);
    } finally {
      await server.stop();
      rmSync(join(historyDir, 'incoming'), { force: true });
      copyFileSync(paths[3], `${live}.new`);
      renameSync(`${live}.new`, live);
      await start();
    }
  }, 60_000);

  test('a corrupt history file is reported, the past answer is a 503, current answers go on', async () => {
    // Every rebuilt copy and mapping dropped, so the next past answer reads the packs.
    await server.stop();
    rmSync(join(historyDir, 'cache'), { recursive: true, force: true });
    await start();
    for (const pack of readdirSync(historyDir).filter((n) => n.endsWith('.pack'))) truncateSync(join(historyDir, pack), 10);
    const a = await past(`/v1/ip/${DC_IP}?at=${iso(T0 + 1000)}`);
    expectError(a, 503, 'SERVICE_UNAVAILABLE');
    expect((await call(server.url, `/v1/ip/${DC_IP}`)).text).toBe(said[3][DC_IP]);
    // A catalog that cannot be read: the status says so, current answers go on.
    writeFileSync(join(historyDir, 'catalog.json'), '{not json');
    const status = JSON.parse((await call(server.url, '/v1/data/status', { headers: { authorization: `Bearer ${ADMIN}` } })).text);
    expect(status.history.readable).toBe(false);
    expect(status.history.error).toContain('catalog.json');
    expectError(await past(`/v1/ip/${DC_IP}?at=${iso(T0 + 1000)}`), 503, 'SERVICE_UNAVAILABLE');
    expect((await call(server.url, `/v1/ip/${VPN_IP}`)).text).toBe(said[3][VPN_IP]);
  }, 60_000);
});
