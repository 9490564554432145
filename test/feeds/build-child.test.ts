/** The refresher's child build: niced command line, the child's own checks, and its exit codes. */
import { afterAll, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildInChild, childCommand } from '../../src/feeds/build-child.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-child-build-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('the build runs below the server: nice -n 10, then the refresh-build command', () => {
  const cmd = childCommand({ out: '/d/i.idx', feedsDir: '/d/feeds', manifest: null, withDefaults: true }, false);
  expect(cmd.slice(1, 3)).toEqual(['-n', '10']);
  expect(cmd[0]).toEndWith('nice');
  expect(cmd.slice(-5)).toEqual(['refresh-build', '--out', '/d/i.idx', '--feeds-dir', '/d/feeds']);
  const manifest = childCommand({ out: '/d/i.idx', feedsDir: '/x', manifest: '/m/feeds.json', withDefaults: false }, true);
  expect(manifest.slice(-6)).toEqual(['refresh-build', '--out', '/d/i.idx', '--manifest', '/m/feeds.json', '--no-defaults']);
});

test('a build with nothing to build fails with a reason and writes no file', async () => {
  const feeds = join(dir, 'feeds');
  mkdirSync(feeds, { recursive: true });
  const out = join(dir, 'never.idx');
  const result = await buildInChild({ out, feedsDir: feeds, manifest: null, withDefaults: false }, false);
  expect(result.ok).toBe(false);
  expect(result.detail).toContain('build exited 1');
  expect(result.detail).toContain('no feed has a good copy');
  expect(existsSync(out)).toBe(false);
});

test('a build is not started once the server stops, and one under way is killed, leaving no file', async () => {
  const stopped = new AbortController();
  stopped.abort();
  expect(await buildInChild({ out: join(dir, 'a.idx'), feedsDir: dir, manifest: null, withDefaults: true }, false, stopped.signal)).toEqual({ ok: false, detail: 'build not started: the server is stopping' });
  // The default build (data packages) takes far longer than the moment it is given here.
  const stopping = new AbortController();
  setTimeout(() => stopping.abort(), 300);
  const out = join(dir, 'b.idx');
  const result = await buildInChild({ out, feedsDir: dir, manifest: null, withDefaults: true }, false, stopping.signal);
  expect(result.ok).toBe(false);
  expect(result.detail).toMatch(/^build exited/);
  expect(existsSync(out)).toBe(false);
}, 30_000);

test("a good build reports the child's own peak memory, not its parent's (a spawned process starts with the parent's maxRSS)", async () => {
  const feeds = join(dir, 'peak-feeds');
  mkdirSync(feeds, { recursive: true });
  const tor = join(FIXTURE_FEEDS_DIR, 'tor/torbulkexitlist');
  writeFileSync(join(feeds, 'feeds.json'), JSON.stringify({ sources: [{ type: 'tor-exits', path: tor }] }));
  // This process holds far more than a build of one Tor list ever needs.
  const ballast = new Uint8Array(768 * 1048576).fill(1);
  const parentRss = process.memoryUsage().rss;
  const result = await buildInChild({ out: join(dir, 'peak.idx'), feedsDir: feeds, manifest: null, withDefaults: false }, false);
  expect(ballast[ballast.length - 1]).toBe(1);
  expect(result.ok).toBe(true);
  expect(parentRss).toBeGreaterThan(768 * 1048576);
  // A bun process holds tens of MiB; this build far less than the parent's ballast.
  expect(result.peakRssBytes!).toBeGreaterThan(16 * 1048576);
  expect(result.peakRssBytes!).toBeLessThan(512 * 1048576);
  expect(result.seconds!).toBeGreaterThan(0);
}, 60_000);
