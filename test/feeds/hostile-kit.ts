/**
 * The rig of the hostile-feed tests: a feed mirror on 127.0.0.1 whose
 * per-path overrides play the hostile publisher, `feeds update` run
 * in-process with its log and state captured, a catalog of real entries with
 * a test's own bounds, a measured run in a process of its own, and a spy
 * counting a parser's runs.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/commands/feeds.ts';
import { PARSERS } from '../../index-builder/parsers/index.ts';
import { startFeedMirror, type FeedMirror } from '../ship/feed-mirror.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';
import { SHARED_FEEDS_DIR } from '../helpers/shared-feeds.ts';

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
    // The fixtures first (a bare clone has them); the real snapshots only for the tests guarded by describeWithShared.
    this.mirror = startFeedMirror([FIXTURE_FEEDS_DIR, SHARED_FEEDS_DIR]);
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

  /**
   * `feeds update --no-build` against the mirror in a child process of its
   * own, as an operator runs it, with that process's peak RSS (VmHWM, read
   * every 20 ms until it exits). Measured inside the test process instead,
   * the figure depended on what earlier test files had left on its heap.
   */
  async updateMeasured(dir: string, catalog: string, ...more: string[]): Promise<{ result: Run; peakMb: number; seconds: number }> {
    const t0 = performance.now();
    const child = Bun.spawn(
      ['bun', 'src/cli.ts', 'feeds', 'update', '--dir', dir, '--catalog', catalog, '--mirror', this.mirror.url, '--index', join(dir, 'index.idx'), '--no-build', ...more],
      { cwd: join(import.meta.dir, '../..'), stdout: 'ignore', stderr: 'pipe' },
    );
    let peakKb = 0;
    const timer = setInterval(() => {
      try {
        const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (kb) peakKb = Math.max(peakKb, Number(kb[1]));
      } catch {
        // it has exited
      }
    }, 20);
    const log = await new Response(child.stderr as ReadableStream<Uint8Array>).text();
    const code = await child.exited;
    clearInterval(timer);
    const statePath = join(dir, 'index.idx.feeds-state.json');
    const result = { code, log, state: existsSync(statePath) ? readFileSync(statePath, 'utf8') : '' };
    return { result, peakMb: Math.round(peakKb / 1024), seconds: Math.round(performance.now() - t0) / 1000 };
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

