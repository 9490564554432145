/**
 * Peak memory of recording an index into a fresh history and of rebuilding
 * it back (issue 39: history's memory within a small box's budget).
 *
 *   bun tools/bench/history-record-memory.ts OLD.idx [NEW.idx]
 *
 * Records OLD (a keyframe), then NEW if given (a change), then rebuilds the
 * first version; after each step prints the process's anonymous RSS (what
 * counts against IPINTEL_MEMORY_MB), its file-backed RSS (the mapped index:
 * page cache) and the peak RSS so far, from /proc/self/status, with a full
 * collection between the steps as the history thread makes after each job.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rebuildVersion } from '../../src/index/history/rebuild.ts';
import { readCatalog, recordVersion } from '../../src/index/history/store.ts';

const [oldPath, newPath] = process.argv.slice(2);
if (!oldPath) {
  console.error('usage: bun tools/bench/history-record-memory.ts OLD.idx [NEW.idx]');
  process.exit(2);
}

/** One line of the process's memory, MiB. */
function memory(): string {
  const status = readFileSync('/proc/self/status', 'utf8');
  const mib = (key: string) => (Number(status.match(new RegExp(`${key}:\\s+(\\d+)`))?.[1] ?? 0) / 1024).toFixed(0);
  return `RssAnon ${mib('RssAnon')} MiB, RssFile ${mib('RssFile')} MiB, peak RSS ${mib('VmHWM')} MiB`;
}

const dir = mkdtempSync(join(tmpdir(), 'ipintel-history-memory-'));
try {
  const day = 86_400_000;
  console.log(`start: ${memory()}`);
  for (const [path, servedFrom] of [[oldPath, Date.now() - 2 * day], [newPath, Date.now() - day]] as const) {
    if (!path) continue;
    const t = performance.now();
    const r = recordVersion(dir, path, servedFrom);
    console.log(`recorded ${path} (${r.keyframe ? 'keyframe' : 'change'}, ${(r.bytesWritten / 2 ** 20).toFixed(1)} MiB written) in ${((performance.now() - t) / 1000).toFixed(1)} s: ${memory()}`);
    Bun.gc(true); // as the history thread does after each job (worker.ts)
  }
  const catalog = readCatalog(dir);
  const t = performance.now();
  rebuildVersion(dir, catalog, catalog.versions[0], join(dir, 'rebuilt.idx'));
  console.log(`rebuilt the first version in ${((performance.now() - t) / 1000).toFixed(1)} s: ${memory()}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
