/**
 * A real server refreshing from a hostile publisher on 127.0.0.1 while it
 * serves: a 1 GiB body, a gzip bomb, a 500 MB JSON feed and 10 M /128 lines
 * arrive in one round. The round runs in the refresh child, so the serving
 * process's resident memory stays flat (asserted generously), every answer
 * during the round is served, each feed is refused and no copy is kept.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeTestCatalog } from './publisher.ts';
import { smallServerIndexInChild } from './refresh-kit.ts';
import { gzipBomb, hostLines, hugeJson, streamed } from './hostile-bodies.ts';
import { fixedTestPort } from '../helpers/fixed-port.ts';

const ROOT = resolve(import.meta.dir, '../..');
const TOR = 'tor/torbulkexitlist';
const RIS6 = 'routing/riswhoisdump.IPv6.gz';
const GOOGLEBOT = 'crawlers/googlebot.json';
const VPN6 = 'vpn/x4bnet-vpn-ipv6.txt';
/** Growth of the serving process's RSS the round may cause (it does its work in a child). */
const SERVING_GROWTH_LIMIT_MB = 200;

/** The serving process's resident memory, MB (null once it exited). */
function rssMb(pid: number): number | null {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return kb ? Number(kb[1]) / 1024 : null;
  } catch {
    return null;
  }
}

describe('a hostile refresh round while serving', () => {
  let work: string;
  let publisher: ReturnType<typeof Bun.serve>;
  let server: Bun.Subprocess;
  const log: string[] = [];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'ipintel-hostile-serving-'));
    const gib = new Uint8Array(1 << 20).fill(0x31); // "1111…": no line of any format
    const bodies: Record<string, () => Response> = {
      [TOR]: () => {
        let sent = 0;
        return streamed(() => (sent++ < 1024 ? gib : null));
      },
      [RIS6]: () => gzipBomb(10_000_000, '%').response(),
      [GOOGLEBOT]: () => hugeJson(500e6).response(),
      [VPN6]: () => hostLines(10_000_000).response(),
    };
    publisher = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch(req) {
        const path = new URL(req.url).pathname.replace(/^\/+/, '');
        return bodies[path]?.() ?? new Response('not found', { status: 404 });
      },
    });
    mkdirSync(join(work, 'feeds'));
    await smallServerIndexInChild(join(work, 'ipintel.idx'));
    writeTestCatalog(join(work, 'catalog.json'), [TOR, RIS6, GOOGLEBOT, VPN6], `http://127.0.0.1:${publisher.port}/`);
  }, 120_000);

  afterAll(async () => {
    server?.kill();
    await server?.exited;
    publisher?.stop(true);
    rmSync(work, { recursive: true, force: true });
  });

  test(`every answer is served, the serving process grows less than ${SERVING_GROWTH_LIMIT_MB} MB, every feed is refused`, async () => {
    const port = fixedTestPort();
    server = Bun.spawn(['bun', 'src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        IPINTEL_INDEX: join(work, 'ipintel.idx'),
        IPINTEL_DB: ':memory:',
        IPINTEL_WORKERS: '1',
        IPINTEL_FEEDS_DIR: join(work, 'feeds'),
        IPINTEL_FEEDS_CATALOG: join(work, 'catalog.json'),
        IPINTEL_RATE_LIMITS: 'off',
      },
      stdout: 'ignore',
      stderr: 'pipe',
    });
    void (async () => {
      for await (const chunk of server.stderr as ReadableStream<Uint8Array>) log.push(...new TextDecoder().decode(chunk).split('\n').filter(Boolean));
    })();
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 150 && !(await fetch(`${url}/health`).then((r) => r.ok, () => false)); i++) await Bun.sleep(200);
    const before = rssMb(server.pid)!;
    let peak = before;
    let answered = 0;
    const failures: string[] = [];
    const done = () => [TOR, RIS6, GOOGLEBOT, VPN6].every((p) => log.some((l) => l.startsWith(`feeds: ${p} `)));
    const deadline = Date.now() + 240_000;
    while (!done() && Date.now() < deadline) {
      const answers = await Promise.all(
        ['/v1/ip/8.8.8.8', '/health', '/v1/ip/2001:4860:4860::8888'].map((p) => fetch(`${url}${p}`).then((r) => r.status, (e) => `error ${(e as Error).message}`)),
      );
      for (const a of answers) if (a === 200) answered++;
      else failures.push(String(a));
      peak = Math.max(peak, rssMb(server.pid) ?? peak);
      await Bun.sleep(20);
    }
    console.log(`hostile round while serving: RSS ${before.toFixed(0)} MB -> peak ${peak.toFixed(0)} MB, ${answered} answers`);
    expect(done()).toBe(true);
    expect(failures).toEqual([]);
    expect(answered).toBeGreaterThan(10);
    expect(peak - before).toBeLessThan(SERVING_GROWTH_LIMIT_MB);
    for (const p of [TOR, RIS6, GOOGLEBOT, VPN6]) {
      const line = log.find((l) => l.startsWith(`feeds: ${p} `))!;
      expect(line).toMatch(/missing/);
      expect(existsSync(join(work, 'feeds', p))).toBe(false);
    }
    expect(log.some((l) => l.includes('feeds: building'))).toBe(false);
    expect(server.exitCode).toBeNull();
  }, 300_000);
});
