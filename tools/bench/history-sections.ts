/**
 * Where a history recording's new bytes are (src/index/history/store.ts):
 *
 *   bun tools/bench/history-sections.ts OLD.idx NEW.idx [--untransformed]
 *
 * Cuts both files into the store's content-defined chunks, with their
 * interval tables transformed as the store stores them (section-transforms.ts;
 * `--untransformed`: as they are, and the whole file chunked as one), and per section of NEW reports the bytes
 * of chunks OLD does not have and their size at the store's zstd level.
 */
import { parseArgs } from 'node:util';
import { chunkEnds } from '../../src/index/history/chunks.ts';
import { storedSegments } from '../../src/index/history/section-transforms.ts';
import { parseIndexBytes } from '../../src/index/map-index-file.ts';
import { printTable } from './bench-kit.ts';

const { values, positionals } = parseArgs({ args: process.argv.slice(2), allowPositionals: true, options: { untransformed: { type: 'boolean' } } });
if (positionals.length !== 2) {
  console.error('usage: bun tools/bench/history-sections.ts OLD.idx NEW.idx [--untransformed]');
  process.exit(2);
}
const mib = (n: number) => (n / 1048576).toFixed(2);

/** The file as the store chunks it (a private mapping: the file is not written). */
function stored(path: string) {
  const file = Bun.mmap(path, { shared: false });
  const index = parseIndexBytes(path, file);
  const segments = values.untransformed ? [{ start: 0, bytes: file }] : storedSegments(index, file).segments;
  const chunks = segments.flatMap((s) => {
    const ends = chunkEnds(s.bytes);
    return ends.map((end, i) => {
      const bytes = s.bytes.subarray(i === 0 ? 0 : ends[i - 1], end);
      return { start: s.start + (i === 0 ? 0 : ends[i - 1]), bytes, hash: Bun.hash.xxHash3(bytes) as bigint };
    });
  });
  return { index, chunks };
}

const before = stored(positionals[0]);
const known = new Set(before.chunks.map((c) => c.hash));
before.chunks.length = 0;
const after = stored(positionals[1]);
const sections = [...after.index.sections.values()].sort((a, b) => a.offset - b.offset);
const fresh = new Map<string, Uint8Array[]>();
for (const c of after.chunks) {
  if (known.has(c.hash)) continue;
  for (const s of sections) {
    const lo = Math.max(c.start, s.offset);
    const hi = Math.min(c.start + c.bytes.length, s.offset + s.length);
    if (hi > lo) (fresh.get(s.tag) ?? fresh.set(s.tag, []).get(s.tag)!).push(c.bytes.subarray(lo - c.start, hi - c.start));
  }
}
const rows = [...fresh].map(([tag, parts]) => {
  const raw = Buffer.concat(parts);
  return { tag, raw: raw.length, zstd: Bun.zstdCompressSync(raw, { level: 3 }).length };
});
rows.sort((a, b) => b.zstd - a.zstd);
printTable([
  ['section', 'new raw MiB', 'new zstd MiB'],
  ...rows.map((r) => [r.tag, mib(r.raw), mib(r.zstd)]),
  ['all', mib(rows.reduce((s, r) => s + r.raw, 0)), mib(rows.reduce((s, r) => s + r.zstd, 0))],
]);
