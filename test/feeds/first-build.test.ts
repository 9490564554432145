/**
 * `bun run start` with no index: the embedded default is built by a child
 * process (its progress and summary on the server's stderr), then served by
 * the parent; a failed build stops the start with the child's reason.
 */
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { IndexReader } from '../../src/index/reader.ts';
import { writeSmallDefaultData } from '../ship/small-default-data.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-first-build-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MAIN = resolve(import.meta.dir, '../../src/main.ts');

/** `bun src/main.ts` with a loopback port, one worker, no refresher, and `env`. */
function start(name: string, env: Record<string, string>) {
  return Bun.spawn([process.execPath, MAIN], {
    cwd: dir,
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'pipe',
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', IPINTEL_WORKERS: '1', IPINTEL_FEEDS_REFRESH: 'off', IPINTEL_DB: join(dir, `${name}.sqlite`), IPINTEL_FEEDS_DIR: join(dir, 'no-feeds'), ...env },
  });
}

test('no index: a child process builds the default (progress and summary shown), then the parent serves it', async () => {
  const data = writeSmallDefaultData(join(dir, 'data'));
  const index = join(dir, 'first', 'ipintel.idx');
  mkdirSync(join(dir, 'first'));
  const server = start('first', { IPINTEL_INDEX: index, IPINTEL_DATA_DIR: data });
  let log = '';
  const decoder = new TextDecoder();
  const reader = server.stderr.getReader();
  try {
    const deadline = Date.now() + 60_000;
    while (!/ipintel listening on 127\.0\.0\.1:\d+/.test(log)) {
      if (Date.now() > deadline) throw new Error(`not listening: ${log}`);
      const { value, done } = await reader.read();
      if (done) throw new Error(`exited before listening: ${log}`);
      log += decoder.decode(value);
    }
    const builder = Number(/building in child process (\d+)/.exec(log)?.[1]);
    expect(builder).toBeGreaterThan(0);
    expect(builder).not.toBe(server.pid);
    expect(log).toContain('peak memory (RSS)'); // the child's summary reached the operator
    const port = /listening on 127\.0\.0\.1:(\d+)/.exec(log)![1];
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    const meta = IndexReader.open(index).meta;
    expect(meta.managedBy).toBe('server');
    expect(meta.sources.map((s) => s.path)).toContain('@ip-location-db/asn/asn-ipv4.csv');
  } finally {
    server.kill('SIGTERM');
    await server.exited;
  }
}, 90_000);

test('a failed first build stops the start: the child says why, the server names the build and exits 1', async () => {
  const empty = join(dir, 'empty-data');
  mkdirSync(empty);
  const index = join(dir, 'failed', 'ipintel.idx');
  // The data is missing and its registry is down (a closed loopback port): the fetch fails, and says so.
  const server = start('failed', { IPINTEL_INDEX: index, IPINTEL_DATA_DIR: empty, IPINTEL_DATA_REGISTRY: 'http://127.0.0.1:9' });
  const [stderr, code] = await Promise.all([new Response(server.stderr).text(), server.exited]);
  expect(code).toBe(1);
  expect(stderr).toContain(`IPINTEL_DATA_DIR=${empty}`);
  expect(stderr).toContain('connection refused');
  expect(stderr).toContain('IPINTEL_DATA_REGISTRY');
  expect(stderr).toMatch(new RegExp(`ipintel cannot start: the first build of ${index.replace(/[.]/g, '\\.')} failed \\(child \\d+ exited 1`));
}, 60_000);

test('a build killed outright (as by the out-of-memory killer) is named as such, and the server does not start', async () => {
  // The real default data: a build of many seconds, killed as soon as it starts.
  const index = join(dir, 'killed', 'ipintel.idx');
  const server = start('killed', { IPINTEL_INDEX: index });
  let log = '';
  const decoder = new TextDecoder();
  const reader = server.stderr.getReader();
  let builder = 0;
  while (!builder) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`exited before building: ${log}`);
    log += decoder.decode(value);
    builder = Number(/building in child process (\d+)/.exec(log)?.[1] ?? 0);
  }
  process.kill(builder, 'SIGKILL');
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    log += decoder.decode(value);
  }
  expect(await server.exited).toBe(1);
  expect(log).toContain(`ipintel cannot start: the first build of ${index} failed (child ${builder} killed by SIGKILL: out of memory, or killed by hand)`);
}, 60_000);
