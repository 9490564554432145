/**
 * Resident memory of a process, sampled from /proc/<pid>/status (Linux),
 * with how many index files it has mapped (/proc/<pid>/maps): after a
 * reload the old file stays mapped until its reader is collected (the
 * holder forces that 2 s after a swap), so RSS is a sawtooth, not a line.
 */
import { readFileSync } from 'node:fs';

export interface RssSample {
  /** Milliseconds since the sampler started. */
  atMs: number;
  /** VmRSS in KiB: anonymous + file-backed (mapped index pages) + shared memory. */
  rssKiB: number;
  /** RssAnon: the JS heap and native allocations, where a leak would show. */
  anonKiB: number;
  /** RssFile: mapped files, mostly index generations. */
  fileKiB: number;
  /** Distinct index files mapped (the live one plus old ones not yet collected). */
  mappedIndexes: number;
}

/** One reading; null when the process is gone or /proc is unavailable. */
export function readRss(pid: number, indexPathPart = '.idx'): Omit<RssSample, 'atMs'> | null {
  let status: string;
  let maps: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
    maps = readFileSync(`/proc/${pid}/maps`, 'utf8');
  } catch {
    return null;
  }
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  const rssKiB = field('VmRSS');
  if (!Number.isFinite(rssKiB)) return null;
  // maps columns: range perms offset dev inode path; count distinct inodes of index files.
  const inodes = new Set<string>();
  for (const line of maps.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols.length >= 6 && cols.slice(5).join(' ').includes(indexPathPart)) inodes.add(cols[4]);
  }
  return { rssKiB, anonKiB: field('RssAnon'), fileKiB: field('RssFile'), mappedIndexes: inodes.size };
}

/** Samples a process every `everyMs` until stopped. */
export function startRssSampler(pid: number, everyMs = 1_000, indexPathPart = '.idx'): { samples: RssSample[]; stop(): void } {
  const t0 = performance.now();
  const samples: RssSample[] = [];
  const take = () => {
    const r = readRss(pid, indexPathPart);
    if (r) samples.push({ atMs: Math.round(performance.now() - t0), ...r });
  };
  take();
  const timer = setInterval(take, everyMs);
  return { samples, stop: () => clearInterval(timer) };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const max = (xs: number[]) => (xs.length ? Math.max(...xs) : NaN);

export interface RssVerdict {
  firstKiB: number;
  lastKiB: number;
  maxKiB: number;
  /** Total RSS, median of the first and last third of the steady-state samples. */
  totalEarlyKiB: number;
  totalLateKiB: number;
  totalGrowthKiB: number;
  /** Anonymous RSS (heap, native allocations), same medians. */
  anonEarlyKiB: number;
  anonLateKiB: number;
  anonGrowthKiB: number;
  maxMappedIndexes: number;
  limitKiB: number;
  /** Too few samples after warm-up to judge (short runs). */
  judged: boolean;
  flat: boolean;
}

/**
 * Whether RSS stayed flat over the samples taken after `warmupMs`, split in
 * thirds: the median of the last third may exceed the median of the first
 * third by at most `limitKiB`, for total RSS and for anonymous RSS (where a
 * heap or native leak shows first). Medians, not single samples: each
 * reload maps a second file for the 2 s until the old one is released, and
 * a GC comes and goes; a sawtooth with the reload's period is not growth.
 */
export function judgeRss(samples: RssSample[], warmupMs: number, limitKiB: number): RssVerdict {
  const all = samples.map((s) => s.rssKiB);
  const steady = samples.filter((s) => s.atMs >= warmupMs);
  const third = Math.floor(steady.length / 3);
  const judged = third >= 3;
  const early = steady.slice(0, third);
  const late = steady.slice(steady.length - third);
  const m = (xs: RssSample[], f: (s: RssSample) => number) => (judged ? median(xs.map(f)) : NaN);
  const totalEarly = m(early, (s) => s.rssKiB);
  const totalLate = m(late, (s) => s.rssKiB);
  const anonEarly = m(early, (s) => s.anonKiB);
  const anonLate = m(late, (s) => s.anonKiB);
  return {
    firstKiB: all[0] ?? NaN,
    lastKiB: all.at(-1) ?? NaN,
    maxKiB: max(all),
    totalEarlyKiB: totalEarly,
    totalLateKiB: totalLate,
    totalGrowthKiB: totalLate - totalEarly,
    anonEarlyKiB: anonEarly,
    anonLateKiB: anonLate,
    anonGrowthKiB: anonLate - anonEarly,
    maxMappedIndexes: max(samples.map((s) => s.mappedIndexes)),
    limitKiB,
    judged,
    flat: !judged || (totalLate - totalEarly <= limitKiB && anonLate - anonEarly <= limitKiB),
  };
}
