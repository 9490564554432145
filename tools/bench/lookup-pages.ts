/**
 * How much of an index file this process maps with 2 MiB page entries, for
 * the lookup benchmarks to print beside their numbers: the same bytes cost
 * ~0.7x the CPU per random lookup when mapped with 2 MiB entries rather than
 * 4 KiB ones (BENCHMARKS.md, index lookup), and a file read back into the
 * page cache by faults or copied in small writes is mapped mostly with 4 KiB.
 * Call after the reader has opened (and so touched) the file.
 */
import { readFileSync, realpathSync } from 'node:fs';

/** "2 MiB page entries: X of Y MiB mapped" for the file at `path`, from /proc/self/smaps. */
export function hugePageNote(path: string): string {
  let smaps: string;
  try {
    smaps = readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return '2 MiB page entries: unknown (no /proc/self/smaps)';
  }
  const file = realpathSync(path);
  // Per mapping: a process that opened the file more than once (the benchmarks do) would otherwise add the mappings up.
  const mappings: { size: number; pmd: number }[] = [];
  let current: { size: number; pmd: number } | null = null;
  for (const line of smaps.split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) {
      current = line.endsWith(` ${file}`) ? { size: 0, pmd: 0 } : null;
      if (current) mappings.push(current);
    } else if (current) {
      const m = /^(Size|FilePmdMapped):\s+(\d+) kB$/.exec(line);
      if (m?.[1] === 'Size') current.size += Number(m[2]);
      else if (m) current.pmd += Number(m[2]);
    }
  }
  const best = mappings.reduce((a, b) => (b.pmd > a.pmd ? b : a), { size: 0, pmd: 0 });
  const size = best.size;
  const pmd = best.pmd;
  return `2 MiB page entries: ${(pmd / 1024).toFixed(0)} of ${(size / 1024).toFixed(0)} MiB of the index mapped (copy it with \`dd bs=2M\` when low)`;
}
