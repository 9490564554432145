/**
 * The refresh child: everything about a feed (download, decompression,
 * validation, the index build) runs in one child process at lower CPU
 * priority, never in the serving process. The parent gives it a memory cap
 * and a time budget and stops it past either; whatever happens to the
 * child, the server keeps serving its current index. The child reports
 * what it did as JSON lines on stdout (src/feeds/refresh-round.ts) and
 * writes the state file itself; it exits when its parent goes away (its
 * stdin closes), so no orphan keeps fetching or building.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readLines, readTail } from '../file-io/read-lines.ts';
import type { RunOutcome } from './feed-state.ts';
import type { RefreshEvent, RefreshRequest } from './refresh-round.ts';
import { buildChildEnv } from './build-child-env.ts';

/** How the parent runs the child. */
export interface ChildLimits {
  /** Resident memory past which the child is killed (IPINTEL_FEEDS_MEMORY_MB). */
  memoryCapBytes: number;
  /** Wall-clock time past which the child is killed. */
  timeBudgetMs: number;
}

/** How a child ended, as the parent saw it. */
export interface ChildResult {
  outcome: RunOutcome;
  /** Why it failed: the cap, the budget, or the child's last stderr lines. */
  detail: string;
  seconds: number;
  /** The child's own peak resident memory (what it reported; else the largest the watchdog saw). */
  peakRssBytes: number | null;
  /** Its process id (null: never started), for removing what it left behind. */
  pid: number | null;
}

/** Niceness of the child: below the server, above idle work. */
const CHILD_NICENESS = 10;
/** How often the watchdog reads the child's resident memory. */
const WATCH_MS = 100;
/** How much of the child's stderr the parent keeps: enough for its last lines, not a whole dump. */
const STDERR_TAIL_CHARS = 16_384;
/** Exit code of a child whose parent went away. */
const ORPHANED = 70;

/** The command line of the child: `nice -n 10 bun src/cli.ts refresh-run` (or the compiled binary's); the request comes on stdin. */
export function childCommand(compiled: boolean): string[] {
  const self = compiled ? [process.execPath] : [process.execPath, join(import.meta.dir, '..', 'cli.ts')];
  const nice = Bun.which('nice');
  return [...(nice ? [nice, '-n', String(CHILD_NICENESS)] : []), ...self, 'refresh-run'];
}

/** Resident memory of process `pid` in bytes (VmRSS of /proc/<pid>/status); null when unknown or gone. */
function residentBytes(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/**
 * Runs one refresh round in a child; resolves when it exits (never rejects).
 * `onEvent` gets the child's events as they come; `signal` kills it (the
 * server stopping, or the lock lost).
 */
export async function runRefreshChild(
  req: RefreshRequest,
  opts: ChildLimits & { compiled: boolean; signal?: AbortSignal; onEvent?: (e: RefreshEvent) => void },
): Promise<ChildResult> {
  const t0 = performance.now();
  const seconds = () => Math.round((performance.now() - t0) / 100) / 10;
  if (opts.signal?.aborted) return { outcome: 'failed', detail: 'not started: stopping', seconds: 0, peakRssBytes: null, pid: null };
  let child: Bun.Subprocess<'pipe', 'pipe', 'pipe'>;
  try {
    child = Bun.spawn(childCommand(opts.compiled), { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe', env: buildChildEnv(process.env) });
  } catch (e) {
    // Out of descriptors or processes: nothing started.
    return { outcome: 'failed', detail: `cannot start the refresh child: ${(e as Error).message}`, seconds: 0, peakRssBytes: null, pid: null };
  }
  let stopped: { outcome: RunOutcome; detail: string } | null = null;
  let watched = 0;
  const stop = (outcome: RunOutcome, detail: string) => {
    stopped ??= { outcome, detail };
    child.kill('SIGKILL');
  };
  // Polled, not a kernel limit: Bun reserves far more address space than it uses, so RLIMIT_AS
  // (ulimit -v) fails it at start-up long before its resident memory is near a useful cap.
  const watchdog = setInterval(() => {
    const rss = residentBytes(child.pid);
    if (rss === null) return;
    watched = Math.max(watched, rss);
    if (rss > opts.memoryCapBytes) stop('memory_cap', `stopped at its memory cap: ${mib(rss)} MiB resident, cap ${mib(opts.memoryCapBytes)} MiB (IPINTEL_FEEDS_MEMORY_MB)`);
  }, WATCH_MS);
  const budget = setTimeout(() => stop('time_budget', `stopped at its time budget of ${Math.round(opts.timeBudgetMs / 1000)} s`), opts.timeBudgetMs);
  const onAbort = () => stop('failed', 'stopped: the server is stopping or lost the refresh lock');
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  let reported: number | null = null;
  try {
    // The request is the first line; stdin then stays open until the child exits (its end tells the child we are gone).
    child.stdin.write(`${JSON.stringify(req)}\n`);
    child.stdin.flush();
    const [, stderr, code] = await Promise.all([
      readLines(child.stdout, (line) => {
        let e: RefreshEvent;
        try {
          e = JSON.parse(line) as RefreshEvent;
        } catch {
          return; // not an event (a stray print)
        }
        if (e.kind === 'done') reported = e.peakRssBytes;
        try {
          opts.onEvent?.(e);
        } catch {
          // The listener's problem, not the child's.
        }
      }),
      readTail(child.stderr, STDERR_TAIL_CHARS),
      child.exited,
    ]);
    const peakRssBytes = reported ?? (watched || null);
    const pid = child.pid;
    if (stopped) return { ...(stopped as { outcome: RunOutcome; detail: string }), seconds: seconds(), peakRssBytes, pid };
    if (code === 0) return { outcome: 'ok', detail: '', seconds: seconds(), peakRssBytes, pid };
    const tail = stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 500);
    const how = code === null || child.signalCode ? `killed by ${child.signalCode ?? 'a signal'}` : `exited ${code}`;
    return { outcome: 'failed', detail: `refresh child ${how}${tail ? `: ${tail}` : ''}`, seconds: seconds(), peakRssBytes, pid };
  } catch (e) {
    child.kill('SIGKILL');
    await child.exited;
    return { outcome: 'failed', detail: `refresh child: ${(e as Error).message}`, seconds: seconds(), peakRssBytes: watched || null, pid: child.pid };
  } finally {
    clearInterval(watchdog);
    clearTimeout(budget);
    opts.signal?.removeEventListener('abort', onAbort);
    try {
      child.stdin.end();
    } catch {}
  }
}

const mib = (bytes: number) => Math.round(bytes / 1048576);

/** `refresh-run`: the child's side. Reads the request from stdin, runs the round, prints events; returns the exit code. */
export async function runRefreshChildMain(): Promise<number> {
  const reader = Bun.stdin.stream().getReader();
  const decoder = new TextDecoder();
  let first = '';
  while (!first.includes('\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    first += decoder.decode(value, { stream: true });
  }
  let req: RefreshRequest;
  try {
    const nl = first.indexOf('\n');
    req = JSON.parse(nl < 0 ? first : first.slice(0, nl)) as RefreshRequest;
  } catch {
    console.error('refresh-run: expected the request as one JSON line on stdin (this command is the refresher\'s, not an operator\'s)');
    return 2;
  }
  // The parent's end of stdin closing means the parent is gone: stop rather than refresh for no one.
  void (async () => {
    try {
      while (!(await reader.read()).done);
    } catch {}
    process.exit(ORPHANED);
  })();
  const emit = (e: RefreshEvent) => console.log(JSON.stringify(e));
  const { runRefreshRound } = await import('./refresh-round.ts');
  const { peakRssBytes } = await import('../../index-builder/index.ts');
  try {
    await runRefreshRound(req, emit);
    emit({ kind: 'done', peakRssBytes: peakRssBytes() });
    return 0;
  } catch (e) {
    console.error(`refresh-run: ${(e as Error).message}`);
    return 1;
  }
}
