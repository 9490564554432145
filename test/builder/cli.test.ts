/**
 * `bun run build-index` as operators (and outside checks) drive it: exit 0
 * with a complete, verified file; 1 naming the feed file and line on bad
 * data; 2 on usage errors; the previous index untouched on failure.
 */
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { IndexReader } from '../../src/index/reader.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';
import { CLI_OPTIONS } from '../../index-builder/build-command.ts';

const ROOT = resolve(import.meta.dir, '../..');
const dir = mkdtempSync(join(tmpdir(), 'ipintel-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function buildIndexCli(args: string[], timeoutMs = 60_000): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn(['bun', 'run', 'build-index', ...args], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe', env: { ...process.env } });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

test('a good manifest: exit 0, summary table, a verified file with its sources', async () => {
  const manifest = join(dir, 'good.json');
  writeFileSync(
    manifest,
    JSON.stringify({
      sources: [
        { type: 'tor-exits', path: join(FIXTURE_FEEDS_DIR, 'tor/torbulkexitlist') },
        { type: 'crawler-ranges', crawler: 'gptbot', path: join(FIXTURE_FEEDS_DIR, 'crawlers/gptbot.json') },
      ],
    }),
  );
  const out = join(dir, 'good.idx');
  const r = await buildIndexCli(['--manifest', manifest, '--out', out, '--no-defaults']);
  expect(r.code).toBe(0);
  expect(r.stderr).toContain('IPv4 intervals');
  // The summary says how much memory the build took (what a host needs free for it).
  const peak = /peak memory \(RSS\)\s+(\d+) MiB/.exec(r.stderr);
  expect(peak).not.toBeNull();
  expect(Number(peak![1])).toBeGreaterThan(0);
  const reader = IndexReader.open(out);
  expect(reader.meta.sources.map((s) => s.type)).toEqual(['tor-exits', 'crawler-ranges']);
  // An operator's manifest build: the server's feed refresher never replaces it.
  expect(reader.meta.managedBy).toBeUndefined();
}, 90_000);

test('a malformed feed: exit 1 naming the file and line; the previous index stays', async () => {
  const out = join(dir, 'kept.idx');
  const ok = join(dir, 'ok.json');
  writeFileSync(ok, JSON.stringify({ sources: [{ type: 'tor-exits', path: join(FIXTURE_FEEDS_DIR, 'tor/torbulkexitlist') }] }));
  expect((await buildIndexCli(['--manifest', ok, '--out', out, '--quiet', '--no-defaults'])).code).toBe(0);
  const before = readFileSync(out);

  const bad = join(dir, 'bad-feed.json');
  writeFileSync(bad, '{"creationTime": "x", "prefixes": "not a list"}');
  const manifest = join(dir, 'bad.json');
  writeFileSync(manifest, JSON.stringify({ sources: [{ type: 'crawler-ranges', crawler: 'gptbot', path: 'bad-feed.json' }] }));
  const r = await buildIndexCli(['--manifest', manifest, '--out', out, '--no-defaults']);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/build failed: bad-feed\.json/);
  expect(Buffer.compare(readFileSync(out), before)).toBe(0);

  // A line-oriented feed where nothing parses: the first bad line is named.
  writeFileSync(join(dir, 'bad-list.txt'), '# a comment\nnot a cidr\nneither is this\n');
  const listManifest = join(dir, 'bad-list.json');
  writeFileSync(listManifest, JSON.stringify({ sources: [{ type: 'cidr-list', category: 'vpn', path: 'bad-list.txt' }] }));
  const r2 = await buildIndexCli(['--manifest', listManifest, '--out', out, '--no-defaults']);
  expect(r2.code).toBe(1);
  expect(r2.stderr).toMatch(/build failed: bad-list\.txt:2: /);
  expect(Buffer.compare(readFileSync(out), before)).toBe(0);
}, 90_000);

test('an unknown type or a missing file: exit 1 naming the manifest entry', async () => {
  const manifest = join(dir, 'unknown.json');
  writeFileSync(manifest, JSON.stringify({ sources: [{ type: 'nope', path: 'x' }] }));
  const r = await buildIndexCli(['--manifest', manifest, '--out', join(dir, 'u.idx')]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('sources[0]: unknown type "nope"');
  expect(existsSync(join(dir, 'u.idx'))).toBe(false);
}, 60_000);

test('usage errors: exit 2', async () => {
  expect((await buildIndexCli([])).code).toBe(2);
  expect((await buildIndexCli(['--bogus'])).code).toBe(2);
  // The old opt-in is gone: defaults are part of a manifest build unless --no-defaults.
  expect((await buildIndexCli(['--manifest', 'x.json', '--with-defaults'])).code).toBe(2);
  expect((await buildIndexCli(['--default', '--no-defaults'])).code).toBe(2);
  expect((await buildIndexCli(['--default', '--manifest', 'x.json'])).code).toBe(2);
}, 60_000);

test('--help describes every flag', async () => {
  const r = await buildIndexCli(['--help']);
  expect(r.code).toBe(0);
  for (const flag of Object.keys(CLI_OPTIONS)) expect(r.stdout).toMatch(new RegExp(`^  --${flag}\\b`, 'm'));
}, 30_000);

test('a manifest build includes the default location and ASN data (a manifest without them gets a location for 8.8.8.8)', async () => {
  const manifest = join(dir, 'with-defaults.json');
  writeFileSync(manifest, JSON.stringify({ sources: [{ type: 'tor-exits', path: join(FIXTURE_FEEDS_DIR, 'tor/torbulkexitlist') }] }));
  const out = join(dir, 'with-defaults.idx');
  // The default data make this build the size of the embedded default (the one test here that pays for it).
  const r = await buildIndexCli(['--manifest', manifest, '--out', out, '--quiet'], 240_000);
  expect(r.code).toBe(0);
  const reader = IndexReader.open(out);
  expect(reader.meta.sources.map((s) => s.type)).toEqual(['geo-mmdb', 'geo-mmdb', 'asn-csv', 'asn-csv', 'tor-exits']);
  const hit = reader.lookup('8.8.8.8')!;
  expect(hit.record.geo?.countryCode).toMatch(/^[A-Z]{2}$/);
  expect(hit.record.asn?.asn).toBe(15169);
}, 260_000);
