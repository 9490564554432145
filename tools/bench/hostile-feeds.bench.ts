/**
 * Memory and time of checking hostile feed copies: `feeds update --no-build`
 * in a child process (the process that downloads and validates, as the
 * refresher's child does) against a publisher on 127.0.0.1 serving, per
 * case, a real list (the baseline), a /0-poisoned list, a gzip bomb, a
 * Content-Encoding bomb, a 500 MB JSON document and 10 M /128 lines (at the
 * default bound, and streamed through the parser with the bound raised).
 * Reports per case the child's peak RSS (its VmHWM, polled until it exits),
 * the ratio to the baseline's, the wall time and the outcome; medians and
 * spreads over the runs.
 *
 *   bun tools/bench/hostile-feeds.bench.ts [--runs 3]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FEEDS_DIR } from '../../test/helpers/recording-sink.ts';
import { gzipBomb, hostLines, hugeJson } from '../../test/feeds/hostile-bodies.ts';
import { startFeedMirror } from '../../test/ship/feed-mirror.ts';
import { median, mib, printTable, procStatus } from './bench-kit.ts';

const argv = process.argv.slice(2);
const runs = Number(argv[argv.indexOf('--runs') + 1] || 3);
const tmp = mkdtempSync(join(tmpdir(), 'ipintel-hostile-bench-'));
const catalogFeeds = JSON.parse(readFileSync(join(import.meta.dir, '../../feeds/catalog.json'), 'utf8')).feeds as Array<{ path: string }>;
const mirror = startFeedMirror();
const cli = join(import.meta.dir, '../../src/cli.ts');

interface Case {
  name: string;
  path: string;
  /** Catalog fields replaced for this case. */
  patch?: object;
  body?: () => Response;
}

const VPN = 'vpn/x4bnet-vpn-ipv4.txt';
const VPN6 = 'vpn/x4bnet-vpn-ipv6.txt';
const vpnText = readFileSync(join(FEEDS_DIR, VPN), 'utf8');
const bomb = gzipBomb(10_000_000, '%');
const encodingBomb = gzipBomb(10_000_000, '#');
const json = hugeJson(500e6);
const lines = hostLines(10_000_000);
const cases: Case[] = [
  { name: `real VPN list (${Math.round(vpnText.length / 1024)} KiB, baseline)`, path: VPN },
  { name: 'the same list + 0.0.0.0/0', path: VPN, body: () => new Response(`${vpnText}0.0.0.0/0\n`) },
  { name: `gzip bomb ${Math.round(bomb.wireBytes / 1e6)} MB -> ${Math.round(bomb.inflatedBytes / 1e9)} GB (ris-whois)`, path: 'routing/riswhoisdump.IPv6.gz', patch: { minRows: 1 }, body: () => bomb.response() },
  { name: 'Content-Encoding bomb 10 MB -> 5 GB (cidr-list)', path: VPN6, body: () => encodingBomb.response({ 'content-encoding': 'gzip' }) },
  { name: 'JSON 500 MB (crawler-ranges)', path: 'crawlers/googlebot.json', body: () => json.response() },
  { name: '10 M /128 lines (cidr-list)', path: VPN6, body: () => lines.response() },
  { name: '10 M /128 lines, maxMb 1024 (streamed parse)', path: VPN6, patch: { maxMb: 1024 }, body: () => lines.response() },
];

/** One run of a case: the child's peak RSS, wall time and the summary row of the feed. */
async function runCase(c: Case, run: number): Promise<{ peak: number; seconds: number; outcome: string }> {
  const dir = join(tmp, `${run}-${cases.indexOf(c)}`);
  const catalog = join(dir + '.catalog.json');
  writeFileSync(catalog, JSON.stringify({ feeds: [{ ...catalogFeeds.find((f) => f.path === c.path)!, ...(c.patch ?? {}) }] }));
  mirror.overrides.clear();
  if (c.body) mirror.overrides.set(c.path, c.body);
  const t0 = performance.now();
  const child = Bun.spawn(['bun', cli, 'feeds', 'update', '--dir', dir, '--catalog', catalog, '--mirror', mirror.url, '--index', join(dir, 'index.idx'), '--no-build', '--quiet'], { stdout: 'pipe', stderr: 'pipe' });
  let peak = 0;
  const poll = setInterval(() => (peak = Math.max(peak, procStatus(child.pid).VmHWM ?? 0)), 10);
  const [, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearInterval(poll);
  const row = err.split('\n').find((l) => l.startsWith(`${c.path} `)) ?? '(no summary row)';
  return { peak, seconds: (performance.now() - t0) / 1000, outcome: row.slice(c.path.length).trim().replace(/\s+/g, ' ') };
}

const results = new Map<Case, Array<{ peak: number; seconds: number; outcome: string }>>();
try {
  for (let run = 0; run < runs; run++) {
    for (const c of cases) {
      const r = await runCase(c, run);
      results.set(c, [...(results.get(c) ?? []), r]);
    }
  }
  const base = median(results.get(cases[0])!.map((r) => r.peak));
  const rows: (string | number)[][] = [['case', 'peak RSS median', 'spread', 'x baseline', 'seconds median', 'outcome']];
  for (const c of cases) {
    const rs = results.get(c)!;
    const peaks = rs.map((r) => r.peak);
    rows.push([
      c.name,
      mib(median(peaks)),
      `${mib(Math.min(...peaks))}–${mib(Math.max(...peaks))}`,
      (median(peaks) / base).toFixed(2),
      median(rs.map((r) => r.seconds)).toFixed(2),
      rs[0].outcome.slice(0, 90),
    ]);
  }
  console.log(`hostile feeds: ${runs} runs, the validating child's peak RSS (VmHWM)\n`);
  printTable(rows);
} finally {
  mirror.stop();
  rmSync(tmp, { recursive: true, force: true });
}
