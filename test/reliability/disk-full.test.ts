/**
 * A full disk, for real: a small tmpfs mounted in a private mount namespace
 * (`unshare -rm`, so nothing on the machine sees it and it vanishes with the
 * probe process). fixtures/disk-full-probe.ts runs inside and reports:
 * an index build onto the full disk fails with ENOSPC and leaves the old
 * index byte-identical and no temp file; the accounts database refuses
 * writes with "database or disk is full" and stays intact; a running
 * server keeps answering keyed lookups and writes the usage it kept in
 * memory once there is room again. Skipped (and said so) where unprivileged
 * namespaces are not allowed.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSoakIndexes } from '../../tools/soak/indexes.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';
import { REPO_ROOT } from './kill.ts';

const FEEDS = FIXTURE_FEEDS_DIR;
const dir = mkdtempSync(join(tmpdir(), 'ipintel-disk-full-'));
const mount = join(dir, 'mnt');
mkdirSync(mount);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Whether this machine lets us mount a private tmpfs (user + mount namespaces). */
const canUnshare = Bun.spawnSync(['unshare', '-rm', 'sh', '-c', `mount -t tmpfs -o size=1m tmpfs '${mount}' && echo ok`], { stdout: 'pipe', stderr: 'pipe' }).stdout.toString().trim() === 'ok';
if (!canUnshare) console.warn('disk-full.test.ts: unshare -rm with a tmpfs mount is not permitted here; the disk-full tests are skipped');

interface ProbeReport {
  index: { exitCode: number; stderr: string; unchanged: boolean; stillOpens: boolean; leftovers: string[] };
  accounts: { grantError: string | null; flushError: string | null; flushAfter: string | null; keyStillResolves: boolean; integrity: string; usageTotal: number; usageExpected: number };
  running: { freeAfterFill: number; statuses: Record<string, number>; lookups: number; serverGrantError: string | null; serverFlushError: string | null; serverUsage: number };
}

let report: ProbeReport;
beforeAll(async () => {
  if (!canUnshare) return;
  const oldIndex = (await buildSoakIndexes(dir, FIXTURE_FEEDS_DIR)).b;
  const manifest = join(dir, 'feeds.json');
  // Room for the old index plus 2 MiB: the build below (~16 MiB) cannot fit beside it.
  const mountMiB = Math.ceil(statSync(oldIndex).size / 2 ** 20) + 2;
  writeFileSync(
    manifest,
    JSON.stringify({
      sources: [
        { type: 'asn-info', path: `${FEEDS}/asn/asn2org-asns.csv.gz` },
        { type: 'rir-delegated', path: `${FEEDS}/rir/delegated-apnic-20260618.gz` },
        { type: 'cloud-aws', path: `${FEEDS}/cloud/aws-ip-ranges.json` },
        { type: 'bogons', path: `${FEEDS}/bogons/fullbogons-ipv4.txt` },
      ],
    }),
  );
  const probe = Bun.spawn(['unshare', '-rm', 'sh', '-c', `mount -t tmpfs -o size=${mountMiB}m tmpfs '${mount}' && exec '${process.execPath}' test/reliability/fixtures/disk-full-probe.ts '${mount}' '${oldIndex}' '${manifest}'`], {
    cwd: REPO_ROOT,
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const timer = setTimeout(() => probe.kill('SIGKILL'), 150_000);
  const [out, err, code] = await Promise.all([new Response(probe.stdout).text(), new Response(probe.stderr).text(), probe.exited]);
  clearTimeout(timer);
  if (code !== 0) throw new Error(`probe exited with ${code}: ${err.slice(-2000)}`);
  report = JSON.parse(out.trim().split('\n').at(-1)!) as ProbeReport;
}, 180_000);

describe.skipIf(!canUnshare)('disk full (ENOSPC on a private tmpfs)', () => {
  test('index build: fails with a clear ENOSPC message, exit 1, old index byte-identical and still opens, no temp file left', () => {
    expect(report.index.exitCode).toBe(1);
    expect(report.index.stderr).toStartWith('build failed:');
    expect(report.index.stderr).toContain('ENOSPC');
    expect(report.index.unchanged).toBe(true);
    expect(report.index.stillOpens).toBe(true);
    expect(report.index.leftovers).toEqual([]);
  });

  test('accounts database: writes refused as "database or disk is full", nothing lost or corrupted, usage written once there is room', () => {
    const a = report.accounts;
    expect(a.grantError).toContain('disk is full');
    expect(a.flushError).toContain('disk is full');
    expect(a.flushAfter).toBeNull();
    expect(a.keyStillResolves).toBe(true);
    expect(a.integrity).toBe('ok');
    // Usage that failed to flush was kept in memory and written by the first flush with room.
    expect(a.usageTotal).toBe(a.usageExpected);
    expect(a.usageExpected).toBeGreaterThan(10);
  });

  test('a running server with a full database disk: keyed lookups still 200, usage written after space returns', () => {
    const r = report.running;
    expect(r.freeAfterFill).toBe(0);
    expect(r.serverGrantError).toContain('disk is full');
    expect(r.serverFlushError).toContain('disk is full');
    expect(r.lookups).toBeGreaterThanOrEqual(100);
    expect(r.statuses).toEqual({ '200': r.lookups });
    // Every lookup counted: the flushes that failed kept their counts, the one with room wrote them.
    expect(r.serverUsage).toBe(r.lookups);
  });
});
