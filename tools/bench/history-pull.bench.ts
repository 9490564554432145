/**
 * A fresh pulling server fetching its publisher's history (issue 39):
 *
 *   bun tools/bench/history-pull.bench.ts OLD.idx NEW.idx
 *
 * Publishes OLD, then NEW, with the publisher's history (published two and
 * one hours ago), serves the folder on 127.0.0.1, and has a fresh puller pull
 * NEW and the history. Reports the bytes the history cost the puller (the
 * history manifest, recipes and packs) against the packs' size and the
 * index's, and how long the history part took (downloads on loopback, and
 * the check of each version against its signed sha256 on the history thread).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HistoryJobs } from '../../src/index/history/jobs.ts';
import { recordPublishedIndex } from '../../src/index/history/recorder.ts';
import { IndexPuller } from '../../src/index/pull/index-puller.ts';
import { PUBLISHED_INDEX, publishIndex } from '../../src/index/publish/publish.ts';
import { readPublicKey, readSigningKey, writeSigningKeyPair } from '../../src/index/publish/signing-keys.ts';
import type { HistoryManifest } from '../../src/index/history/history-manifest.ts';

const [oldPath, newPath] = process.argv.slice(2);
if (!oldPath || !newPath) {
  console.error('usage: bun tools/bench/history-pull.bench.ts OLD.idx NEW.idx');
  process.exit(2);
}
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
const secs = (t: number) => `${((performance.now() - t) / 1000).toFixed(1)} s`;
const work = mkdtempSync(join(tmpdir(), 'ipintel-history-pull-bench-'));
const jobs = new HistoryJobs();
try {
  const keys = writeSigningKeyPair(join(work, 'key'));
  const pub = join(work, 'pub');
  mkdirSync(pub);
  const history = { dir: join(work, 'publisher-history'), retentionMs: 30 * DAY };
  const now = Date.now();
  let manifest;
  for (const [path, at] of [[oldPath, now - 2 * HOUR], [newPath, now - HOUR]] as const) {
    const t = performance.now();
    manifest = await publishIndex({
      indexPath: path,
      dir: pub,
      privateKey: readSigningKey(keys.keyPath),
      keep: 3,
      xdelta3: null,
      now: () => at,
      log: (l) => console.log(l),
      history: { dir: history.dir, record: (p, ms) => recordPublishedIndex(history, jobs, p, ms) },
    });
    console.log(`published ${path} with its history in ${secs(t)}`);
  }
  const h = (await Bun.file(join(pub, manifest!.history!.file)).json()) as HistoryManifest;
  const packs = Object.entries(h.files).filter(([n]) => n.endsWith('.pack'));
  const packBytes = packs.reduce((s, [, f]) => s + f.size, 0);
  const files = Object.values(h.files).reduce((s, f) => s + f.size, 0);
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (r) => new Response(Bun.file(join(pub, new URL(r.url).pathname.slice(1)))) });
  const dir = join(work, 'puller');
  mkdirSync(dir);
  const logs: string[] = [];
  let swappedAt = 0;
  const puller = new IndexPuller({
    indexUrl: `http://127.0.0.1:${server.port}/${PUBLISHED_INDEX}`,
    publicKey: readPublicKey(keys.pubPath),
    localPath: join(dir, 'ipintel.idx'),
    pollMs: HOUR,
    maxAgeMs: 30 * DAY,
    swap: async () => {
      swappedAt = performance.now();
    },
    log: (l) => logs.push(l),
    xdelta3: null,
    history: { config: { dir: join(dir, 'history'), retentionMs: 30 * DAY }, jobs: new HistoryJobs() },
  });
  const t = performance.now();
  const outcome = await puller.poll();
  const took = secs(t);
  const historyTook = secs(swappedAt);
  await puller.close();
  server.stop(true);
  const s = puller.status;
  console.log(logs.join('\n'));
  console.log(`poll ${outcome} in ${took}: the history ${historyTook} of it (after the swap); index ${mib(manifest!.size)}, its transfer ${mib(s.last_transfer?.downloaded_bytes ?? 0)} (${s.last_transfer?.method})`);
  console.log(`history of ${h.versions.length} versions: downloaded ${s.history?.downloaded_bytes} bytes (${mib(s.history?.downloaded_bytes ?? 0)}) = history manifest ${manifest!.history!.size} + recipes and packs ${files}; packs ${packBytes} bytes (${mib(packBytes)}, ${packs.length} packs); ${((100 * (s.history?.downloaded_bytes ?? 0)) / packBytes).toFixed(2)} % of the packs, ${((100 * (s.history?.downloaded_bytes ?? 0)) / manifest!.size).toFixed(1)} % of one index`);
} finally {
  jobs.close();
  rmSync(work, { recursive: true, force: true });
}
