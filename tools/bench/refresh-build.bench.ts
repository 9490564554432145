/**
 * Serving while the feed refresher builds: throughput and latency of
 * GET /v1/ip/{ip} (random IPv4, full object) on the real server, first
 * alone, then while a background build runs exactly as the refresher starts
 * it (src/feeds/build-child.ts: the same niced child command line), in
 * windows until the build ends (their mean req/s, median p50/p99 and worst
 * p99). Also the build's peak RSS (as the child reports it: its VmHWM) and duration.
 *
 *   bun tools/bench/refresh-build.bench.ts [--index f] [--manifest ../shared/feeds/feeds.json]
 *                                          [--window 5] [--connections 64]
 *   bun tools/bench/refresh-build.bench.ts --short     a quick check that it runs (fixture index, 4 small feeds)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { childCommand } from '../../src/feeds/build-child.ts';
import { fixtureIndexPath } from '../../test/helpers/fixture-index.ts';
import { SHARED_FEEDS_DIR } from '../../test/helpers/shared-feeds.ts';
import { FEEDS_DIR } from '../../test/helpers/recording-sink.ts';
import { median, mib, printTable } from './bench-kit.ts';
import { randomIpScript, startTarget, wrk, type WrkResult } from './http-kit.ts';

function option(argv: string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
}

const argv = process.argv.slice(2);
const short = argv.includes('--short');
const tmp = mkdtempSync(join(tmpdir(), 'ipintel-refresh-bench-'));
const index = option(argv, '--index') ?? (await fixtureIndexPath(SHARED_FEEDS_DIR));
let manifest = option(argv, '--manifest') ?? join(FEEDS_DIR, 'feeds.json');
if (short) {
  manifest = join(tmp, 'feeds.json');
  const feeds = [
    { type: 'tor-exits', path: 'tor/torbulkexitlist' },
    { type: 'cidr-list', category: 'content', path: 'cloud/cloudflare-ips-v4.txt' },
    { type: 'crawler-ranges', crawler: 'googlebot', path: 'crawlers/googlebot.json' },
    { type: 'spamhaus-drop', path: 'threat/spamhaus-drop_v4.json' },
  ].map((f) => ({ ...f, path: join(FEEDS_DIR, f.path) }));
  writeFileSync(manifest, JSON.stringify({ sources: feeds }));
}
const windowS = Number(option(argv, '--window') ?? (short ? 1 : 5));
const connections = Number(option(argv, '--connections') ?? 64);
const script = randomIpScript('/v1/ip/', '');

const target = await startTarget('ipintel', ['ipintel', index]);
const url = `http://127.0.0.1:${target.port}/`;
const rows: (string | number)[][] = [['phase', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'server µs/req']];
const row = (phase: string, r: WrkResult) => rows.push([phase, Math.round(r.rps), r.p50ms.toFixed(2), r.p99ms.toFixed(2), r.errors + r.non2xx, r.cpuUsPerReq.toFixed(1)]);
try {
  wrk(url, { connections, duration: 1 }, script, target.child.pid!); // warm-up
  row('serving alone', wrk(url, { connections, duration: windowS * 2 }, script, target.child.pid!));

  const out = join(tmp, 'next.idx');
  // The short check leaves the default data out: with it the build takes minutes on a loaded machine.
  const cmd = childCommand({ out, feedsDir: tmp, manifest: resolve(manifest), withDefaults: !short }, false);
  const t0 = performance.now();
  // The child prints its own peak (VmHWM) on stdout; its resourceUsage() would start from this process's peak.
  const build = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'inherit' });
  const buildOut = new Response(build.stdout).text();
  let done = false;
  void build.exited.then(() => (done = true));
  const windows: WrkResult[] = [];
  while (!done) {
    // wrk blocks this process; the exit promise is seen between windows.
    await Bun.sleep(0);
    windows.push(wrk(url, { connections, duration: windowS }, script, target.child.pid!));
    await Bun.sleep(0);
  }
  const requests = windows.reduce((a, w) => a + w.requests, 0);
  const sorted = (f: (w: WrkResult) => number) => windows.map(f).sort((a, b) => a - b);
  rows.push([
    `during build (${windows.length} windows of ${windowS} s)`,
    Math.round(windows.reduce((a, w) => a + w.rps, 0) / windows.length),
    median(sorted((w) => w.p50ms)).toFixed(2),
    `${median(sorted((w) => w.p99ms)).toFixed(2)} (worst ${Math.max(...windows.map((w) => w.p99ms)).toFixed(2)})`,
    windows.reduce((a, w) => a + w.errors + w.non2xx, 0),
    (windows.reduce((a, w) => a + w.cpuUsPerReq * w.requests, 0) / requests).toFixed(1),
  ]);
  const code = await build.exited;
  const seconds = (performance.now() - t0) / 1000;
  row('after the build', wrk(url, { connections, duration: windowS * 2 }, script, target.child.pid!));
  printTable(rows);
  const reported = /^peak-rss-bytes=(\d+)$/m.exec(await buildOut);
  const peak = reported ? Number(reported[1]) : null;
  console.log(`\nbuild: ${cmd.join(' ')}`);
  console.log(`build exit ${code}, ${seconds.toFixed(1)} s wall (windows of ${windowS} s round it up), peak RSS ${peak ? mib(Number(peak)) : 'unknown'}`);
  if (code !== 0) process.exitCode = 1;
} finally {
  target.child.kill();
  rmSync(tmp, { recursive: true, force: true });
}
