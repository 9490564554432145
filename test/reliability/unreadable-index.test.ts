/**
 * An index that cannot be read: the server refuses to start (exit code 1,
 * the path and the reason on stderr, nothing listening) and leaves the file
 * as it was; a reload of a path that turned into a directory is refused and
 * the old index keeps serving. (Corrupt, truncated, empty and missing files
 * on reload are covered by test/http/reload.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { startChildServer } from '../../tools/soak/child-server.ts';
import { buildSoakIndexes, swapIndexFile } from '../../tools/soak/indexes.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-unreadable-'));
let good: string;
beforeAll(async () => {
  good = (await buildSoakIndexes(dir, FIXTURE_FEEDS_DIR)).a;
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts `bun run src/main.ts` on `indexPath`; returns the start-up failure text (throws if it started). */
async function startFailure(indexPath: string): Promise<string> {
  try {
    const s = await startChildServer({ IPINTEL_INDEX: indexPath, IPINTEL_DB: ':memory:', IPINTEL_DNS_SERVERS: '127.0.0.1:9' }, 60_000);
    await s.stop();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`the server started on ${indexPath}`);
}

describe('the server does not start on an unreadable index', () => {
  const cases: Array<[string, (path: string) => void, RegExp]> = [
    ['a directory', (p) => mkdirSync(p), /cannot open: not a regular file/],
    ['an empty file', (p) => writeFileSync(p, ''), /truncated/],
    ['a truncated file', (p) => writeFileSync(p, readFileSync(good).subarray(0, 50_000)), /truncated/],
    ['a corrupt file (one flipped byte)', (p) => {
      const bytes = new Uint8Array(readFileSync(good));
      bytes[Math.floor(bytes.length * 0.6)] ^= 0x40;
      writeFileSync(p, bytes);
    }, /checksum mismatch|corrupt/],
    ['not an index at all', (p) => writeFileSync(p, 'PK\u0003\u0004 a zip, say'.repeat(100)), /wrong magic/],
  ];
  for (const [label, make, reason] of cases) {
    test(
      label,
      async () => {
        const path = join(dir, `bad-${label.replace(/\W+/g, '-')}.idx`);
        make(path);
        const before = label === 'a directory' ? null : readFileSync(path);
        const failure = await startFailure(path);
        expect(failure).toContain('exited with 1 before listening');
        expect(failure).toContain(`index ${path}: `);
        expect(failure).toMatch(reason);
        // An existing bad file is reported, never silently rebuilt or replaced.
        if (before) expect(Buffer.compare(readFileSync(path), before)).toBe(0);
      },
      90_000,
    );
  }
});

describe('reload when the index path has become a directory', () => {
  let server: RunningServer;
  const live = join(dir, 'live.idx');
  beforeAll(async () => {
    swapIndexFile(good, live);
    server = await startTestServer({ IPINTEL_INDEX: live, IPINTEL_ADMIN_TOKEN: 'unreadable-admin', IPINTEL_RATE_LIMITS: 'off' });
  }, 120_000);
  afterAll(() => server?.stop());

  test('is refused with INVALID_REQUEST and the old index keeps serving', async () => {
    const health = async () => (await (await fetch(`${server.url}/health`)).json()) as { index: { generation: number; built_at: string } };
    const before = await health();
    renameSync(live, `${live}.moved`);
    mkdirSync(live);
    const res = await fetch(`${server.url}/reload`, { method: 'POST', headers: { authorization: 'Bearer unreadable-admin' } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; error: string; details: { what: string } };
    expect(body.code).toBe('INVALID_REQUEST');
    expect(body.details.what).toBe('index');
    expect(body.error).toContain('not a regular file');
    expect(await health()).toEqual(before);
    const tor = await fetch(`${server.url}/v1/ip/185.220.101.1?fields=classification`);
    expect(tor.status).toBe(200);
    expect(((await tor.json()) as { classification: { is_tor: boolean } }).classification.is_tor).toBe(true);
  });
});
