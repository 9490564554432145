/**
 * POST /reload (issue 3 rule 7): admin only; maps the new file and swaps it
 * in atomically while lookups run (none fails, each sees one whole index);
 * a corrupt, truncated or missing file is refused and the old index keeps
 * serving. Two small real indexes are built from a geo CSV and the real Tor
 * exit list, differing in the city of one range and in build time.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import type { ResolvedSource } from '../../index-builder/manifest.ts';
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';
import { call, expectError, NO_LIMITS } from './support.ts';

const ADMIN = 'reload-admin-token';
const admin = { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } };

let dir: string;
let live: string;
let indexA: string;
let indexB: string;
let server: RunningServer;

/** Builds a small index whose 81.2.69.0/24 range is in `city` (Asia/Kolkata: a fixed +05:30 offset). */
async function build(name: string, city: string, builtAt: string): Promise<string> {
  const csv = join(dir, `${name}.csv`);
  writeFileSync(csv, `81.2.69.0,81.2.69.255,IN,Karnataka,,${city},560001,12.97,77.59,Asia/Kolkata\n`);
  const sources: ResolvedSource[] = [
    { options: { type: 'geo-csv', path: csv }, absPath: csv, displayPath: `${name}.csv` },
    { options: { type: 'tor-exits', path: 'tor/exit-addresses' }, absPath: resolve(FIXTURE_FEEDS_DIR, 'tor/exit-addresses'), displayPath: 'tor/exit-addresses' },
  ];
  const out = join(dir, `${name}.idx`);
  await buildIndex({ sources, out, quiet: true, builtAtMs: Date.parse(builtAt) });
  return out;
}

/** Replaces the live file atomically (copy to a temp name, rename over), as an operator's deploy would. */
function install(from: string | Uint8Array): void {
  const tmp = `${live}.tmp`;
  if (typeof from === 'string') copyFileSync(from, tmp);
  else writeFileSync(tmp, from);
  renameSync(tmp, live);
}

const cityOf = async () => (await call(server.url, '/v1/ip/81.2.69.10?fields=location')).json().location.city as string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ipintel-reload-'));
  live = join(dir, 'live.idx');
  indexA = await build('a', 'Alpha', '2026-10-01T00:00:00Z');
  indexB = await build('b', 'Beta', '2026-10-02T00:00:00Z');
  install(indexA);
  server = await startTestServer({ ...NO_LIMITS, IPINTEL_INDEX: live, IPINTEL_ADMIN_TOKEN: ADMIN });
}, 120_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('admin only', () => {
  const callers: Array<[string, () => Record<string, string> | Promise<Record<string, string>>]> = [
    ['no credentials', () => ({})],
    ['a wrong token', () => ({ authorization: 'Bearer nope' })],
    ['the token without Bearer', () => ({ authorization: ADMIN })],
    ['a valid Pro API key', async () => ({ 'x-api-key': (await server.services.accounts.grantKeyByEmail('ops@example.com', 'pro', 'ops')).created.secret })],
  ];
  for (const [label, headers] of callers) {
    test(`${label}: 403 FORBIDDEN, nothing reloaded`, async () => {
      const generation = server.services.index.generation;
      expectError(await call(server.url, '/reload', { method: 'POST', headers: await headers() }), 403, 'FORBIDDEN');
      expectError(await call(server.url, '/metrics', { headers: await headers() }), 403, 'FORBIDDEN');
      expect(server.services.index.generation).toBe(generation);
    });
  }

  test('without IPINTEL_ADMIN_TOKEN nobody is admin', async () => {
    const open = await startTestServer({ ...NO_LIMITS, IPINTEL_INDEX: live });
    try {
      expectError(await call(open.url, '/reload', { method: 'POST', headers: { authorization: 'Bearer ' } }), 403, 'FORBIDDEN');
      expectError(await call(open.url, '/reload', { method: 'POST', headers: { authorization: 'Bearer undefined' } }), 403, 'FORBIDDEN');
    } finally {
      await open.stop();
    }
  });
});

describe('a good file', () => {
  test('is swapped in and the answer says what was loaded', async () => {
    install(indexA);
    await call(server.url, '/reload', admin);
    expect(await cityOf()).toBe('Alpha');
    const generation = (await call(server.url, '/health')).json().index.generation;
    install(indexB);
    const a = await call(server.url, '/reload', admin);
    expect(a.status).toBe(200);
    expect(a.headers.get('cache-control')).toBe('no-store');
    const b = a.json();
    expect(b.reloaded).toBe(true);
    expect(b.index.built_at).toBe('2026-10-02T00:00:00.000Z');
    expect(b.index.generation).toBe(generation + 1);
    expect(b.index.v4_intervals).toBeGreaterThan(0);
    expect(b.index.size_bytes).toBe(readFileSync(indexB).length);
    expect(typeof b.policy_version).toBe('string');
    expect(await cityOf()).toBe('Beta');
    expect((await call(server.url, '/v1/data/status')).json().index.built_at).toBe('2026-10-02T00:00:00.000Z');
    expect((await call(server.url, '/health')).json().index.generation).toBe(generation + 1);
  });

  test('the offset of a named time zone is ±HH:MM (Asia/Kolkata: +05:30)', async () => {
    const loc = (await call(server.url, '/v1/ip/81.2.69.10?fields=location')).json().location;
    expect(loc.timezone).toBe('+05:30');
    expect(loc.timezone_name).toBe('Asia/Kolkata');
  });

  test('200 concurrent lookups across three reloads: none fails, each answer is from one whole index', async () => {
    install(indexB);
    expect((await call(server.url, '/reload', admin)).status).toBe(200);
    // Each answer: its status and whether its content is one an index gives (a city of A or B; the Tor exit as text).
    const answers: Array<{ status: number; content: string }> = [];
    let reloadsDone = false;
    const worker = async () => {
      // At least 5 rounds, and on until the reloads are over (bounded: 100 rounds).
      for (let i = 0; i < 100 && (i < 5 || !reloadsDone); i++) {
        const a = await call(server.url, '/v1/ip/81.2.69.10?fields=location');
        answers.push({ status: a.status, content: a.status === 200 ? a.json().location.city : a.text });
        const t = await call(server.url, '/185.220.101.1?format=text');
        answers.push({ status: t.status, content: t.text.split('\t')[0] });
      }
    };
    const reloads = (async () => {
      while (answers.length < 200) await Bun.sleep(1); // lookups are in full flight on B
      const statuses: number[] = [];
      for (const file of [indexA, indexB, indexA]) {
        install(file);
        statuses.push((await call(server.url, '/reload', admin)).status);
      }
      reloadsDone = true;
      return statuses;
    })();
    await Promise.all(Array.from({ length: 200 }, worker));
    expect(await reloads).toEqual([200, 200, 200]);
    expect(answers.length).toBeGreaterThanOrEqual(200 * 10);
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    expect(answers.filter((a) => !['Alpha', 'Beta', '185.220.101.1'].includes(a.content))).toEqual([]);
    // Both indexes served during the run: B before the reloads, A after the last one.
    expect(answers.some((a) => a.content === 'Beta')).toBe(true);
    expect(answers.some((a) => a.content === 'Alpha')).toBe(true);
    expect(await cityOf()).toBe('Alpha');
  }, 60_000);
});

describe('a bad file is refused and the old index keeps serving', () => {
  const corruptions: Array<[string, () => Uint8Array | null]> = [
    ['a flipped byte in the middle', () => {
      const bytes = new Uint8Array(readFileSync(indexB));
      bytes[Math.floor(bytes.length / 2)] ^= 0xff;
      return bytes;
    }],
    ['a flipped byte in the header', () => {
      const bytes = new Uint8Array(readFileSync(indexB));
      bytes[40] ^= 0x01;
      return bytes;
    }],
    ['a truncated file', () => new Uint8Array(readFileSync(indexB)).subarray(0, 100_000)],
    ['an empty file', () => new Uint8Array(0)],
    ['not an index at all', () => new TextEncoder().encode('{"hello":"world"}\n'.repeat(100))],
    ['a missing file', () => null],
  ];
  for (const [label, make] of corruptions) {
    test(label, async () => {
      install(indexA);
      expect((await call(server.url, '/reload', admin)).status).toBe(200);
      const before = (await call(server.url, '/health')).json().index;
      const bytes = make();
      if (bytes === null) rmSync(live);
      else install(bytes);
      const d = expectError(await call(server.url, '/reload', admin), 400, 'INVALID_REQUEST');
      expect(d.what).toBe('index');
      // Still the old index, still healthy, still answering.
      expect(await cityOf()).toBe('Alpha');
      const health = await call(server.url, '/health');
      expect(health.status).toBe(200);
      expect(health.json().index).toEqual(before);
      expect((await call(server.url, '/185.220.101.1?format=text')).status).toBe(200);
      install(indexA); // leave a good file for the next test
    });
  }
});

describe('reload re-reads the decision policy (IPINTEL_POLICY)', () => {
  test('a new policy file is swapped in; a bad one refuses the whole reload', async () => {
    const { loadPolicy } = await import('../../src/scoring/index.ts');
    const base = await loadPolicy();
    const policyPath = join(dir, 'policy.json');
    const write = (version: string) => writeFileSync(policyPath, JSON.stringify({ ...base, policy_version: version }));
    write('2099-01.1');
    install(indexA);
    const withPolicy = await startTestServer({ ...NO_LIMITS, IPINTEL_INDEX: live, IPINTEL_ADMIN_TOKEN: ADMIN }, { policy: { current: await loadPolicy(policyPath), path: policyPath } });
    try {
      const version = async () => (await call(withPolicy.url, '/v1/ip/8.8.8.8?fields=decision')).json().decision.policy_version;
      expect(await version()).toBe('2099-01.1');
      write('2099-01.2');
      const ok = await call(withPolicy.url, '/reload', admin);
      expect(ok.status).toBe(200);
      expect(ok.json().policy_version).toBe('2099-01.2');
      expect(await version()).toBe('2099-01.2');
      // A broken policy with a good new index: nothing changes, neither policy nor index.
      const generation = (await call(withPolicy.url, '/health')).json().index.generation;
      writeFileSync(policyPath, '{"policy_version": 42');
      install(indexB);
      const d = expectError(await call(withPolicy.url, '/reload', admin), 400, 'INVALID_REQUEST');
      expect(d.what).toBe('policy');
      expect(await version()).toBe('2099-01.2');
      expect((await call(withPolicy.url, '/health')).json().index.generation).toBe(generation);
      expect((await call(withPolicy.url, '/v1/ip/81.2.69.10?fields=location')).json().location.city).toBe('Alpha');
    } finally {
      await withPolicy.stop();
      install(indexA);
    }
  });
});
