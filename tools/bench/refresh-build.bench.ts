/**
 * Serving during a feed refresh: throughput, latency and resident memory of
 * the real server answering GET /v1/ip/{ip} (random IPv4, full object),
 * first alone, then while its own refresher runs a round in its child
 * (src/feeds/refresh-child.ts: every catalog feed found in ../shared/feeds
 * downloaded from a mirror on 127.0.0.1, checked, and a build with the
 * default data), in windows until the swap (their mean req/s, median p50/p99
 * and worst p99; the server's RSS sampled every 200 ms), then after it.
 * Also the child's own peak RSS (its VmHWM, as the refresher records it) and
 * the round's duration.
 *
 *   bun tools/bench/refresh-build.bench.ts [--index f] [--window 5] [--connections 64]
 *   bun tools/bench/refresh-build.bench.ts --short     a quick check that it runs (4 small feeds, no default data)
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadCatalog, manifestEntryOf } from '../../src/feeds/catalog.ts';
import { fixtureIndexPath } from '../../test/helpers/fixture-index.ts';
import { FEEDS_DIR } from '../../test/helpers/recording-sink.ts';
import { median, mib, printTable, procStatus } from './bench-kit.ts';
import { randomIpScript, startTarget, wrk, type WrkResult } from './http-kit.ts';

function option(argv: string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
}

const argv = process.argv.slice(2);
const short = argv.includes('--short');
const tmp = mkdtempSync(join(tmpdir(), 'ipintel-refresh-bench-'));
const index = join(tmp, 'ipintel.idx');
copyFileSync(option(argv, '--index') ?? (await fixtureIndexPath(FEEDS_DIR)), index);
// The catalog feeds the snapshots hold; the short check takes four small ones.
const SHORT = ['tor/torbulkexitlist', 'cloud/cloudflare-ips-v4.txt', 'crawlers/googlebot.json', 'threat/spamhaus-drop_v4.json'];
const feeds = loadCatalog().filter((f) => existsSync(join(FEEDS_DIR, f.path)) && (!short || SHORT.includes(f.path)));
// An operator manifest naming them, each an empty placeholder file: the refresher fetches every one, then builds.
for (const f of feeds) {
  mkdirSync(dirname(join(tmp, f.path)), { recursive: true });
  writeFileSync(join(tmp, f.path), '');
}
writeFileSync(join(tmp, 'feeds.json'), JSON.stringify({ sources: feeds.map(manifestEntryOf) }));
const mirror = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: (req) => {
    const path = decodeURIComponent(new URL(req.url).pathname).replace(/^\/+/, '');
    return feeds.some((f) => f.path === path) ? new Response(Bun.file(join(FEEDS_DIR, path))) : new Response('not found', { status: 404 });
  },
});
const windowS = Number(option(argv, '--window') ?? (short ? 1 : 5));
const connections = Number(option(argv, '--connections') ?? 64);
const script = randomIpScript('/v1/ip/', '');
const statePath = `${index}.feeds-state.json`;

const target = await startTarget('ipintel', [], join(import.meta.dir, 'refresh-target.ts'), {
  IPINTEL_INDEX: index,
  IPINTEL_FEEDS_MANIFEST: join(tmp, 'feeds.json'),
  IPINTEL_FEEDS_MIRROR: `http://127.0.0.1:${mirror.port}`,
  ...(short ? { BENCH_NO_DEFAULTS: '1' } : {}),
});
const pid = target.child.pid!;
const url = `http://127.0.0.1:${target.port}/`;
const rss = () => procStatus(pid).VmRSS ?? 0;
const rows: (string | number)[][] = [['phase', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'server RSS MiB']];
const row = (phase: string, r: WrkResult, rssBytes: number) => rows.push([phase, Math.round(r.rps), r.p50ms.toFixed(2), r.p99ms.toFixed(2), r.errors + r.non2xx, Math.round(rssBytes / 1048576)]);
const lastRun = () => (existsSync(statePath) ? (JSON.parse(readFileSync(statePath, 'utf8')).lastRun ?? null) : null);
try {
  wrk(url, { connections, duration: 1 }, script, pid); // warm-up
  row('serving alone', wrk(url, { connections, duration: windowS * 2 }, script, pid), rss());

  const t0 = performance.now();
  target.child.kill('SIGUSR2');
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(rss()), 200);
  const windows: WrkResult[] = [];
  while (lastRun() === null) {
    await Bun.sleep(0); // wrk blocks this process; the sampler runs between windows
    windows.push(wrk(url, { connections, duration: windowS }, script, pid));
    samples.push(rss());
  }
  clearInterval(sampler);
  const seconds = (performance.now() - t0) / 1000;
  const sorted = (f: (w: WrkResult) => number) => windows.map(f).sort((a, b) => a - b);
  rows.push([
    `during the refresh (${windows.length} windows of ${windowS} s)`,
    Math.round(windows.reduce((a, w) => a + w.rps, 0) / windows.length),
    median(sorted((w) => w.p50ms)).toFixed(2),
    `${median(sorted((w) => w.p99ms)).toFixed(2)} (worst ${Math.max(...windows.map((w) => w.p99ms)).toFixed(2)})`,
    windows.reduce((a, w) => a + w.errors + w.non2xx, 0),
    `${Math.round(median([...samples].sort((a, b) => a - b)) / 1048576)} (max ${Math.round(Math.max(...samples) / 1048576)})`,
  ]);
  row('after the swap', wrk(url, { connections, duration: windowS * 2 }, script, pid), rss());
  printTable(rows);
  const run = lastRun();
  console.log(`\nrefresh of ${feeds.length} feeds${short ? '' : ' + the default data'}: ${run.outcome}${run.reason ? ` (${run.reason})` : ''}, ${seconds.toFixed(1)} s wall (windows of ${windowS} s round it up), child peak RSS ${run.peakRssBytes ? mib(run.peakRssBytes) : 'unknown'}`);
  if (run.outcome !== 'ok') process.exitCode = 1;
} finally {
  target.child.kill();
  mirror.stop(true);
  rmSync(tmp, { recursive: true, force: true });
}
