/**
 * The worker bundle (src/host/workers/worker-bundle.ts): built for a tree,
 * served by a start from that tree only while the tree is as it was built
 * from; a changed source file makes the start load the source instead.
 * A one-worker start loads its server (single-host.ts) from the same bundle.
 * Run in a copy of the tree (its own node_modules/.cache), never this one.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { bundledPool, bundledSingleHost, bundleKey, buildWorkerBundle, freshWorkerBundle, LAZY_PACKAGES } from '../../src/host/workers/worker-bundle.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';

const ROOT = resolve(import.meta.dir, '../..');
let tree = '';
let starts = 0;

beforeAll(() => {
  tree = mkdtempSync(join(tmpdir(), 'ipintel-bundle-'));
  for (const name of ['src', 'index-builder', 'feeds', 'drizzle', 'package.json', 'bun.lock', 'tsconfig.json', 'bunfig.toml']) cpSync(join(ROOT, name), join(tree, name), { recursive: true });
  // The packages by link, not copied; the cache folder is the copy's own.
  mkdirSync(join(tree, 'node_modules'));
  for (const name of readdirSync(join(ROOT, 'node_modules'))) if (name !== '.cache') symlinkSync(join(ROOT, 'node_modules', name), join(tree, 'node_modules', name));
});

afterAll(() => {
  if (tree) rmSync(tree, { recursive: true, force: true });
});

/** What a start served: each asked path's status and body. */
type Answers = Record<string, { status: number; body: string }>;

/**
 * Starts `bun src/main.ts` of the copy over the fixture index, with two
 * workers (a file database: `:memory:` serves with one thread) unless told;
 * resolves with its output and, once it listens, its /health status and its
 * answers to `paths` (then stops it).
 */
async function start(workers = '2', paths: string[] = []): Promise<{ listening: boolean; health: number; output: string; answers: Answers }> {
  const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: tree,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', IPINTEL_INDEX: await fixtureIndexPath(), IPINTEL_DB: join(tree, `db-${++starts}.sqlite`), IPINTEL_HISTORY: 'off', IPINTEL_FEEDS_REFRESH: 'off', IPINTEL_DNS_SERVERS: '127.0.0.1:9', IPINTEL_WORKERS: workers },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  let output = '';
  const decoder = new TextDecoder();
  const read = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) output += decoder.decode(chunk);
  };
  void read(proc.stdout as ReadableStream<Uint8Array>);
  void read(proc.stderr as ReadableStream<Uint8Array>);
  const end = Date.now() + 60_000;
  try {
    while (proc.exitCode === null && Date.now() < end) {
      const port = /ipintel listening on \S*:(\d+) \(index/.exec(output)?.[1];
      if (port) {
        const answers: Answers = {};
        for (const path of paths) {
          const res = await fetch(`http://127.0.0.1:${port}${path}`);
          answers[path] = { status: res.status, body: await res.text() };
        }
        return { listening: true, health: (await fetch(`http://127.0.0.1:${port}/health`)).status, output, answers };
      }
      await Bun.sleep(50);
    }
    await proc.exited;
    return { listening: false, health: 0, output, answers: {} };
  } finally {
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await proc.exited;
    clearTimeout(timer);
  }
}

test('built once per tree state; a start uses it only while fresh, and loads the source once a file changed', async () => {
  expect(freshWorkerBundle(tree)).toBeNull();
  const built = await buildWorkerBundle(tree);
  expect(built).toMatchObject({ kind: "built" });
  const entry = freshWorkerBundle(tree);
  expect(entry).toBe(built.kind === 'built' ? built.entry : '');
  expect((await buildWorkerBundle(tree)).kind).toBe('fresh');

  // The real bundle serves.
  const served = await start();
  expect(served.listening).toBe(true);
  expect(served.health).toBe(200);

  // The packages left out are required by name, and found from the bundle's folder (the tree's node_modules).
  const code = readFileSync(entry!, 'utf8');
  for (const name of LAZY_PACKAGES) {
    expect([`require("${name}")`, `import("${name}")`].some((call) => code.includes(call))).toBe(true);
    expect(Bun.resolveSync(name, dirname(entry!))).toContain(`/node_modules/${name}/`);
  }

  // A start loads the bundle's files, the primary its pool (a bundle that throws stops the start), the threads the worker's.
  const pool = bundledPool(entry!);
  const poolCode = readFileSync(pool);
  writeFileSync(pool, "throw new Error('the pool was loaded from the bundle');\n");
  renameSync(`${pool}.jsc`, `${pool}.jsc.aside`);
  const poolFailed = await start();
  expect(poolFailed.listening).toBe(false);
  expect(poolFailed.output).toContain('the pool was loaded from the bundle');
  writeFileSync(pool, poolCode);
  renameSync(`${pool}.jsc.aside`, `${pool}.jsc`);
  expect((await start()).health).toBe(200);

  writeFileSync(entry!, "throw new Error('the worker was loaded from the bundle');\n");
  rmSync(`${entry}.jsc`);
  const failed = await start();
  expect(failed.listening).toBe(false);
  expect(failed.output).toContain('the worker was loaded from the bundle');

  // One changed source file: the bundle is stale, and the start loads the source.
  const before = bundleKey(tree);
  appendFileSync(join(tree, 'src', 'api-error.ts'), '\n// changed\n');
  expect(bundleKey(tree)).not.toBe(before);
  expect(freshWorkerBundle(tree)).toBeNull();
  const fromSource = await start();
  expect(fromSource.listening).toBe(true);
  expect(fromSource.health).toBe(200);
}, 180_000);

test("the refresher's downloads under feeds/ leave the bundle fresh; a changed catalog does not", async () => {
  const built = await buildWorkerBundle(tree);
  expect(built.kind === 'built' || built.kind === 'fresh').toBe(true);
  const entry = freshWorkerBundle(tree);
  expect(entry).not.toBeNull();
  // What a refresh round writes into IPINTEL_FEEDS_DIR's default (feeds/), finished or cut off mid-download.
  mkdirSync(join(tree, 'feeds', 'asn'), { recursive: true });
  writeFileSync(join(tree, 'feeds', 'asn', 'asn2org-asns.csv'), '1,example\n');
  writeFileSync(join(tree, 'feeds', 'asn', '.download-4242-asn2org-asns.csv'), '1,exa');
  expect(freshWorkerBundle(tree)).toBe(entry);
  // The catalog is bundled (src/feeds/catalog.ts imports it): a change to it is a change to the bundle.
  appendFileSync(join(tree, 'feeds', 'catalog.json'), '\n');
  expect(freshWorkerBundle(tree)).toBeNull();
}, 120_000);

test('a one-worker start serves from the bundle while it is current, from the source once not, and both answer the same', async () => {
  const built = await buildWorkerBundle(tree);
  expect(built.kind === 'built' || built.kind === 'fresh').toBe(true);
  const entry = freshWorkerBundle(tree)!;
  const paths = ['/health', '/v1/ip/8.8.8.8', '/v1/ip/2001:4860:4860::8888'];
  const fromBundle = await start('1', paths);
  expect(fromBundle.listening).toBe(true);
  expect(fromBundle.output).toContain('(index');
  expect(fromBundle.output).toContain(', 1 worker)');
  for (const path of paths) expect(fromBundle.answers[path]!.status).toBe(200);

  // The bundle's one-thread host is what loads (one that throws stops the start), and no worker thread's.
  const single = bundledSingleHost(entry);
  const singleCode = readFileSync(single);
  writeFileSync(single, "throw new Error('the one-thread host was loaded from the bundle');\n");
  renameSync(`${single}.jsc`, `${single}.jsc.aside`);
  writeFileSync(entry, "throw new Error('a worker was loaded from the bundle');\n");
  renameSync(`${entry}.jsc`, `${entry}.jsc.aside`);
  const failed = await start('1');
  expect(failed.listening).toBe(false);
  expect(failed.output).toContain('the one-thread host was loaded from the bundle');
  expect(failed.output).not.toContain('a worker was loaded from the bundle');

  // Stale (a source file changed): the same start loads the source, past the throwing bundle, and answers the same.
  appendFileSync(join(tree, 'src', 'api-error.ts'), '\n// changed again\n');
  expect(freshWorkerBundle(tree)).toBeNull();
  const fromSource = await start('1', paths);
  expect(fromSource.listening).toBe(true);
  expect(fromSource.answers).toEqual(fromBundle.answers);
  writeFileSync(single, singleCode);
  renameSync(`${single}.jsc.aside`, `${single}.jsc`);
}, 180_000);
