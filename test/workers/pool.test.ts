/**
 * Several workers on one port (src/host/workers/): exact limits across them,
 * /reload reaching every worker under load with the old file unmapped
 * everywhere, and a killed worker restarted while the others serve.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAccounts } from '../../src/accounts/store.ts';
import { loadConfig } from '../../src/config.ts';
import { startWorkerPool, type WorkerPool } from '../../src/host/workers/pool.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';
import { startDnsTestServer } from '../crawlers/dns-test-server.ts';
import { TestClient } from '../accounts/helpers/client.ts';
import { startMockIdp, type MockIdp } from '../accounts/helpers/mock-idp.ts';
import { oidcEnv } from '../accounts/helpers/test-app.ts';

const ADMIN = 'admin-token-for-pool-tests';
const dir = mkdtempSync(join(tmpdir(), 'ipintel-pool-'));
/** The pools' log lines, shown when a test fails (a worker's exit or failed start is only said there). */
const logs: string[] = [];

async function startPool(env: Record<string, string>): Promise<WorkerPool> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', IPINTEL_DNS_SERVERS: '127.0.0.1:9', IPINTEL_ADMIN_TOKEN: ADMIN, IPINTEL_WORKERS: '2', IPINTEL_HISTORY: 'off', ...env });
  return startWorkerPool(config, (line) => logs.push(`${new Date().toISOString()} ${line}`));
}

/** Runs a test's body; when it fails, prints the pools' log first. */
function withPoolLog(body: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await body();
    } catch (e) {
      console.error(`pool log:\n${logs.join('\n')}`);
      throw e;
    }
  };
}

/** One request on its own connection, so the kernel may hand it to any worker. */
function get(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { headers: { connection: 'close', ...headers } });
}

/** Lines of this process's memory map naming `path` (the workers are threads of this process). */
function mappingsOf(path: string): string[] {
  return readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .filter((line) => line.includes(path));
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('exact limits across workers', () => {
  let pool: WorkerPool;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    const db = join(dir, 'limits.sqlite');
    const store = await openAccounts(db, { flushIntervalMs: 0, syncIntervalMs: 0 });
    for (const tier of ['free', 'pro'] as const) keys[tier] = (await store.grantKeyByEmail(`${tier}@example.test`, tier, 'k')).created.secret;
    await store.close();
    pool = await startPool({ IPINTEL_INDEX: await fixtureIndexPath(), IPINTEL_DB: db });
  }, 60_000);
  afterAll(() => pool?.stop());

  let refused = 0;
  for (const [tier, limit] of [['anonymous', 60], ['free', 200], ['pro', 600]] as const) {
    test(`${tier}: a concurrent burst gets exactly ${limit} 200s (plus what refilled meanwhile), Remaining never repeats`, async () => {
      const headers: Record<string, string> = tier === 'anonymous' ? {} : { 'x-api-key': keys[tier]! };
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: limit + 60 }, () => get(`${pool.url}/v1/ip/current`, headers)));
      // A bucket refills one request per 60 s / limit while the burst lasts: those are admitted too, and no more.
      const refilled = Math.floor((Date.now() - started) / (60_000 / limit));
      const ok = answers.filter((r) => r.status === 200);
      expect(ok.length).toBeGreaterThanOrEqual(limit);
      expect(ok.length).toBeLessThanOrEqual(limit + refilled);
      expect(answers.filter((r) => r.status === 429).length).toBe(limit + 60 - ok.length);
      refused += limit + 60 - ok.length;
      const remaining = ok.map((r) => r.headers.get('x-ratelimit-remaining'));
      expect(remaining.every((v) => v !== null)).toBe(true);
      // Refills can give two answers the same count; never more than that.
      expect(new Set(remaining).size).toBeGreaterThanOrEqual(limit - refilled);
      await Promise.all(answers.map((r) => r.arrayBuffer()));
    });
  }

  test('/metrics reports the host: every worker counted', async () => {
    const text = await (await get(`${pool.url}/metrics`, { authorization: `Bearer ${ADMIN}` })).text();
    const rejected = /^ipintel_rate_limit_rejections_total (\d+)/m.exec(text);
    expect(Number(rejected?.[1])).toBe(refused);
    expect(refused).toBeGreaterThan(0);
    expect(text).toMatch(/^ipintel_workers 2$/m);
  });
});

describe('one server to the operator', () => {
  let pool: WorkerPool;
  const index = join(dir, 'served.idx');

  beforeAll(async () => {
    copyFileSync(await fixtureIndexPath(), index);
    pool = await startPool({ IPINTEL_INDEX: index, IPINTEL_DB: join(dir, 'ops.sqlite'), IPINTEL_RATE_LIMITS: 'off' });
  }, 60_000);
  afterAll(() => pool?.stop());

  test('reload under load: no failed request, every worker on the new generation, the old file unmapped', withPoolLog(async () => {
    expect(mappingsOf(index).length).toBeGreaterThan(0);
    copyFileSync(await fixtureIndexPath(), `${index}.next`);
    renameSync(`${index}.next`, index);
    let reloaded = false;
    const failures: number[] = [];
    let answered = 0;
    const client = async () => {
      // Bounded: until the reload is done, then 20 more each.
      for (let after = 0; after < 20; ) {
        const r = await get(`${pool.url}/v1/ip/8.8.8.8`);
        await r.arrayBuffer();
        answered++;
        if (r.status !== 200) failures.push(r.status);
        if (reloaded) after++;
      }
    };
    const load = Promise.all(Array.from({ length: 6 }, client));
    await Bun.sleep(50);
    const res = await fetch(`${pool.url}/reload`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
    reloaded = true;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { index: { generation: number } }).index.generation).toBe(2);
    await load;
    expect(failures).toEqual([]);
    expect(answered).toBeGreaterThan(120);
    expect([pool.state.generationOf(0), pool.state.generationOf(1)]).toEqual([2, 2]);
    const health = await get(`${pool.url}/health`);
    expect(health.status).toBe(200);
    // Each worker releases its replaced reader a moment after the swap.
    await until(() => mappingsOf(index).every((line) => !line.endsWith('(deleted)')), 'the replaced index to be unmapped by every worker');
    expect(mappingsOf(index).length).toBeGreaterThan(0);
  }), 60_000); // a reload of every worker under wrk-like load: past Bun's 5 s default on a loaded machine

  test('/health is 503 while the workers disagree on the generation', withPoolLog(async () => {
    pool.state.setGeneration(1, 99);
    try {
      const res = await get(`${pool.url}/health`);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { code: string }).code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      pool.state.setGeneration(1, 2);
    }
  }));

  test('a killed worker: the other keeps serving, it comes back, the crash is counted', withPoolLog(async () => {
    const failures: string[] = [];
    let stop = false;
    let answered = 0;
    const CLIENTS = 4;
    const client = async () => {
      for (let i = 0; i < 2_000 && !stop; i++) {
        try {
          const r = await get(`${pool.url}/v1/ip/1.1.1.1`);
          await r.arrayBuffer();
          if (r.status !== 200) failures.push(String(r.status));
          answered++;
        } catch (e) {
          failures.push((e as Error).message);
        }
      }
    };
    const load = Promise.all(Array.from({ length: CLIENTS }, client));
    await Bun.sleep(100);
    pool.worker(0)!.terminate();
    await until(() => pool.state.generationOf(0) === 0, 'the worker to stop');
    const answeredAtKill = answered;
    await until(() => answered > answeredAtKill + 50, 'the other worker to keep serving');
    await until(() => pool.state.generationOf(0) === 2, 'the worker to come back on the current generation');
    stop = true;
    await load;
    // At most the requests in flight (one per client) on the killed worker fail.
    expect(failures.length).toBeLessThanOrEqual(CLIENTS);
    expect(pool.state.crashes).toBe(1);
    const after = await Promise.all(Array.from({ length: 40 }, () => get(`${pool.url}/v1/ip/1.1.1.1`)));
    expect(after.map((r) => r.status)).toEqual(Array(40).fill(200));
    const text = await (await get(`${pool.url}/metrics`, { authorization: `Bearer ${ADMIN}` })).text();
    expect(text).toMatch(/^ipintel_worker_crashes_total 1$/m);
  }));
});

describe('key cache across workers', () => {
  let pool: WorkerPool;
  let secret = '';
  let keyId = '';
  let session = '';

  beforeAll(async () => {
    const db = join(dir, 'keys.sqlite');
    const store = await openAccounts(db, { flushIntervalMs: 0, syncIntervalMs: 0 });
    const granted = await store.grantKeyByEmail('revoker@example.test', 'free', 'k');
    secret = granted.created.secret;
    keyId = granted.created.key.id;
    session = (await store.createSession(granted.user.id)).token;
    await store.close();
    // Every worker loads the key at start; sign-in configured (nothing calls the provider here).
    pool = await startPool({
      IPINTEL_INDEX: await fixtureIndexPath(),
      IPINTEL_DB: db,
      IPINTEL_RATE_LIMITS: 'off',
      IPINTEL_OAUTH_PROVIDER: 'github',
      IPINTEL_OAUTH_CLIENT_ID: 'id',
      IPINTEL_OAUTH_CLIENT_SECRET: 'secret',
      IPINTEL_OAUTH_REDIRECT_URI: 'http://127.0.0.1/auth/callback',
    });
  }, 60_000);
  afterAll(() => pool?.stop());

  test('a key revoked through one worker is refused by every worker as soon as the revocation answers', async () => {
    const before = await Promise.all(Array.from({ length: 20 }, () => get(`${pool.url}/v1/ip/8.8.8.8`, { 'x-api-key': secret })));
    expect(before.map((r) => r.status)).toEqual(Array(20).fill(200));
    const revoked = await fetch(`${pool.url}/auth/keys/${keyId}`, { method: 'DELETE', headers: { cookie: `ipintel_session=${session}` } });
    expect(revoked.status).toBe(200);
    const after = await Promise.all(Array.from({ length: 40 }, () => get(`${pool.url}/v1/ip/8.8.8.8`, { 'x-api-key': secret })));
    expect(after.map((r) => r.status)).toEqual(Array(40).fill(401));
  });
});

describe('sign-in across workers', () => {
  let pool: WorkerPool;
  let idp: MockIdp;

  beforeAll(async () => {
    idp = startMockIdp();
    // The redirect URI names the port: take a free one first.
    const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() });
    const port = String(probe.port);
    await probe.stop(true);
    pool = await startPool({
      PORT: port,
      IPINTEL_INDEX: await fixtureIndexPath(),
      IPINTEL_DB: join(dir, 'signin.sqlite'),
      IPINTEL_RATE_LIMITS: 'off',
      ...oidcEnv(idp.url, idp.clientId, idp.clientSecret),
      IPINTEL_OAUTH_REDIRECT_URI: `http://127.0.0.1:${port}/auth/callback`,
    });
  }, 60_000);
  afterAll(async () => {
    await pool?.stop();
    idp?.stop();
  });

  test('the first key is shown once on the dashboard, whichever worker the callback and the dashboard reach', async () => {
    // A new connection per hop, so callback and dashboard land on either worker (both ways happen over these sign-ins).
    for (let i = 0; i < 10; i++) {
      idp.user = { sub: `spread-${i}`, email: `spread${i}@example.test`, email_verified: true, name: `S ${i}` };
      const client = new TestClient();
      const { res, hops } = await client.follow(`${pool.url}/auth/idp`, { headers: { connection: 'close' } });
      expect(new URL(hops.at(-1)!.url).pathname).toBe('/dashboard');
      const shown = (await res.text()).match(/ipi_[A-Za-z0-9_-]{43}/)?.[0];
      expect(shown).toBeDefined();
      for (let j = 0; j < 4; j++) {
        const again = await (await client.fetch(`${pool.url}/dashboard`, { headers: { connection: 'close' } })).text();
        expect(again.includes(shown!)).toBe(false);
      }
    }
  });
});

describe('shutdown', () => {
  test('stop drains: a request in flight on a worker (waiting on a crawler DNS proof) is answered', async () => {
    const dns = await startDnsTestServer();
    // Never answered: the lookup waits out its proof budget, in flight while the pool stops.
    dns.set('PTR', '1.66.249.66.in-addr.arpa', { silent: true });
    const pool = await startPool({ IPINTEL_INDEX: await fixtureIndexPath(), IPINTEL_DB: join(dir, 'drain.sqlite'), IPINTEL_RATE_LIMITS: 'off', IPINTEL_DNS_SERVERS: dns.address });
    try {
      const inFlight = get(`${pool.url}/v1/ip/66.249.66.1`).then(
        (r) => r.status,
        (e: Error) => e.message,
      );
      await until(() => dns.queries.length > 0, 'the lookup to ask DNS');
      await pool.stop();
      expect(await inFlight).toBe(200);
    } finally {
      await pool.stop();
      await dns.close();
    }
  }, 60_000);
});
