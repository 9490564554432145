/**
 * Small shared helpers for the issue-2 benchmarks (lookup, startup, build,
 * rss): statistics, a printed table, and where the index to measure lives.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { DEFAULT_INDEX_PATH } from '../../src/index/default-paths.ts';

/** The index file to measure: argv, then $IPINTEL_INDEX, then the server's default path. */
export function indexPathArg(argv: string[], at = 2): string {
  const path = argv[at] ?? (process.env.IPINTEL_INDEX?.trim() || DEFAULT_INDEX_PATH);
  if (!existsSync(path)) {
    console.error(`no index at ${path}; build the embedded default once with:\n  bun run build-index --default --out /tmp/bench-default.idx\nand pass that path`);
    process.exit(2);
  }
  return path;
}

export function median(xs: number[]): number {
  return quantile(xs, 0.5);
}

/** Nearest-rank quantile (q in [0, 1]) of a copy of xs. */
export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

export function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

export function fileSize(path: string): number {
  return statSync(path).size;
}

/** Prints rows as an aligned plain-text table (first row is the header). */
export function printTable(rows: (string | number)[][]): void {
  const text = rows.map((r) => r.map(String));
  const widths = text[0].map((_, c) => Math.max(...text.map((r) => (r[c] ?? '').length)));
  const line = (r: string[]) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  console.log(line(text[0]));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of text.slice(1)) console.log(line(r));
}

/** Fields of /proc/<pid>/status in bytes (VmRSS, VmHWM, RssAnon, RssFile, ...); empty once the process is gone. */
export function procStatus(pid: number | 'self' = 'self'): Record<string, number> {
  const out: Record<string, number> = {};
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return out;
  }
  for (const m of text.matchAll(/^(\w+):\s+(\d+) kB$/gm)) out[m[1]] = Number(m[2]) * 1024;
  return out;
}

/** Pids of a process and all its descendants (from /proc/<pid>/task/<tid>/children). */
export function processTree(root: number): number[] {
  const seen: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    seen.push(pid);
    try {
      const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
      if (text) for (const c of text.split(/\s+/)) queue.push(Number(c));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return seen;
}

/** A TCP port free right now (the kernel picks it; a tiny race with other helpers is acceptable). */
export function freePort(): number {
  const listener = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

/** Deterministic xorshift32 stream, so every run measures the same addresses. */
export function xorshift32(seed = 0x9e3779b9): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s >>> 0;
  };
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat (Linux). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // After the command name in parentheses (which may hold spaces): utime and stime are fields 14 and 15 of the line.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/**
 * CPU seconds of a process and its descendants alive now (a master and its
 * worker processes, like nginx's); a process gone between the listing and
 * the read counts 0.
 */
export function treeCpuSeconds(root: number): number {
  let total = 0;
  for (const pid of processTree(root)) {
    try {
      total += cpuSeconds(pid);
    } catch {
      // It ended meanwhile.
    }
  }
  return total;
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/** A bench script's usage: its header comment (the file at `path`) as plain text, for `--help`. */
export function usageOf(path: string): string {
  const header = readFileSync(path, 'utf8').split('*/')[0];
  return header.replace(/^\/\*\*\n?/, '').replace(/^ \* ?/gm, '');
}
