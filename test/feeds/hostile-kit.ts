/**
 * The rig of the hostile-feed tests: a feed mirror on 127.0.0.1 whose
 * per-path overrides play the hostile publisher, `feeds update` run
 * in-process with its log and state captured, a catalog of real entries with
 * a test's own bounds, the process's peak RSS around a step, and a spy
 * counting a parser's runs.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/commands/feeds/cli.ts';
import { PARSERS } from '../../index-builder/parsers/index.ts';
import { startFeedMirror, type FeedMirror } from '../ship/feed-mirror.ts';

export const VPN = 'vpn/x4bnet-vpn-ipv4.txt';
export const VPN6 = 'vpn/x4bnet-vpn-ipv6.txt';
export const GOOGLEBOT = 'crawlers/googlebot.json';
export const RIS6 = 'routing/riswhoisdump.IPv6.gz';
/** A string the hostile publisher plants in what it sends: it must appear in no log line and no state file. */
export const SECRET = 'AKIA-LEAKED-SECRET-7f3c';

export interface Run {
  code: number;
  log: string;
  /** The feed state file the run left beside the index. */
  state: string;
}

/** The summary table's row of one feed. */
export const rowOf = (run: Run, path: string) => run.log.split('\n').find((l) => l.startsWith(`${path} `)) ?? '';
/** A feed's record in the state file a run left. */
export const stateOf = (run: Run, path: string) => JSON.parse(run.state).feeds[path];

/** A temp folder and a mirror, started before a file's tests and stopped after. */
export class HostileRig {
  tmp = '';
  mirror!: FeedMirror;

  start(): void {
    this.tmp = mkdtempSync(join(tmpdir(), 'ipintel-hostile-'));
    this.mirror = startFeedMirror();
  }

  stop(): void {
    this.mirror.stop();
    rmSync(this.tmp, { recursive: true, force: true });
  }

  /** A catalog of the real entries for `paths`, with `patch` applied per path (a test's own bounds). */
  writeCatalog(name: string, paths: string[], patch: Record<string, object> = {}): string {
    const all = JSON.parse(readFileSync(join(import.meta.dir, '../../feeds/catalog.json'), 'utf8')).feeds as { path: string }[];
    const feeds = paths.map((p) => ({ ...all.find((x) => x.path === p)!, ...(patch[p] ?? {}) }));
    const path = join(this.tmp, name);
    writeFileSync(path, JSON.stringify({ feeds }));
    return path;
  }

  /** Runs `feeds update --no-build` in-process against the mirror; captures stderr. */
  async update(dir: string, catalog: string, ...more: string[]): Promise<Run> {
    const lines: string[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void lines.push(args.join(' '));
    let code: number;
    try {
      code = await main(['update', '--dir', dir, '--catalog', catalog, '--mirror', this.mirror.url, '--index', join(dir, 'index.idx'), '--no-build', ...more]);
    } finally {
      console.error = original;
    }
    const statePath = join(dir, 'index.idx.feeds-state.json');
    return { code, log: lines.join('\n'), state: existsSync(statePath) ? readFileSync(statePath, 'utf8') : '' };
  }

  /** One update with `path` answered by `respond`. */
  async serving(dir: string, catalog: string, path: string, respond: () => Response, ...more: string[]): Promise<Run> {
    this.mirror.overrides.set(path, respond);
    try {
      return await this.update(dir, catalog, ...more);
    } finally {
      this.mirror.overrides.clear();
    }
  }
}

/** This process's peak RSS since the last reset (Linux VmHWM), or null where /proc does not say. */
function peakRss(): number | null {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return kb ? Number(kb[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Peak growth of this process's RSS while `work` runs: the kernel's high-water mark (reset first), else samples every 20 ms. */
export async function peakRssGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growthMb: number; seconds: number }> {
  Bun.gc(true);
  const base = process.memoryUsage.rss();
  try {
    // Resets VmHWM to the current RSS: a synchronous peak between two samples is still seen.
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    // Not Linux, or not allowed: the samples alone.
  }
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  const t0 = performance.now();
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage.rss(), peakRss() ?? 0);
    return { result, growthMb: Math.round((peak - base) / 1048576), seconds: Math.round(performance.now() - t0) / 1000 };
  } finally {
    clearInterval(timer);
  }
}

/** Counts the parses of copies of `type` (a spy on the parser table the validation loads its parser from) until `restore`. */
export function countParses(type: string): { count: () => number; restore: () => void } {
  const real = PARSERS[type];
  let n = 0;
  PARSERS[type] = async () => {
    const mod = await real();
    return {
      parse: (ctx, sink) => {
        n++;
        return mod.parse(ctx, sink);
      },
    };
  };
  return { count: () => n, restore: () => void (PARSERS[type] = real) };
}

