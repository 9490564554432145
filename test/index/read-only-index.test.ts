/**
 * An index on a read-only volume: Bun.mmap opens read-write and fails with
 * EROFS there, so the index is mapped read-only instead. The server test
 * runs in a private mount namespace (root and unshare(1) needed; CI has both).
 */
import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { mapFileReadOnly } from '../../src/index/map-read-only.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';
import { fixedTestPort } from '../helpers/fixed-port.ts';

const ROOT = resolve(import.meta.dir, '../..');
const canMount = process.getuid?.() === 0 && Bun.which('unshare') !== null;
const runMount = canMount || !!process.env.CI;
if (!canMount) console.log('read-only-index: the read-only mount test is skipped (needs root and unshare)');

const work = mkdtempSync(join(tmpdir(), 'ipintel-ro-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('read-only mapping', () => {
  test('maps the same bytes as reading the file', async () => {
    const path = await fixtureIndexPath();
    const mapped = mapFileReadOnly(path, readFileSync(path).length);
    expect(Buffer.from(mapped).equals(readFileSync(path))).toBe(true);
  });

  test('a file that cannot be opened names errno', () => {
    expect(() => mapFileReadOnly(join(work, 'missing.idx'), 4096)).toThrow(/errno 2\b/);
  });
});

describe.if(runMount)('an index on a read-only mount', () => {
  test('Bun.mmap is refused there and the server maps it read-only and serves', async () => {
    const src = join(work, 'src');
    const ro = join(work, 'ro');
    mkdirSync(src);
    mkdirSync(ro);
    copyFileSync(await fixtureIndexPath(), join(src, 'ipintel.idx'));
    const index = join(ro, 'ipintel.idx');
    const port = fixedTestPort();
    const script = [
      `mount --bind '${src}' '${ro}'`,
      `mount -o remount,bind,ro '${ro}'`,
      // Proof that the mount is read-only: Bun.mmap itself fails with EROFS.
      `bun -e "try { Bun.mmap('${index}'); console.log('MMAP_OK') } catch (e) { console.log('MMAP_' + e.code) }"`,
      `exec bun run src/main.ts`,
    ].join(' && ');
    const child = Bun.spawn(['unshare', '--mount', '--propagation', 'private', 'sh', '-c', script], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        IPINTEL_INDEX: index,
        IPINTEL_DB: join(work, 'accounts.sqlite'),
        IPINTEL_FEEDS_REFRESH: 'off',
        IPINTEL_WORKERS: '1',
      },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    try {
      let answer: Response | null = null;
      for (let i = 0; i < 100 && !answer; i++) {
        await Bun.sleep(200);
        answer = await fetch(`http://127.0.0.1:${port}/v1/ip/8.8.8.8`).catch(() => null);
      }
      expect(answer?.status).toBe(200);
      const body = (await answer!.json()) as { network: { asn: string } };
      expect(body.network.asn).toBe('AS15169');
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(health.status).toBe(200);
    } finally {
      child.kill();
      await child.exited;
    }
    const out = await new Response(child.stdout).text();
    expect(out).toContain('MMAP_EROFS');
  }, 60_000);
});
