/**
 * Binary deltas between two index versions with xdelta3 (VCDIFF, RFC 3284;
 * Debian's `xdelta3` package), run as a bounded child process so neither the
 * publisher's nor a serving host's event loop waits on it. xdelta3 reads the
 * source through a fixed window (XDELTA3_SOURCE_WINDOW), so making and applying
 * a delta take tens of MB whatever the index size (BENCHMARKS.md, "Deltas").
 * A delta is only ever a cheaper way to get bytes whose sha256 is signed: the
 * result is verified like any download, so a bug here costs bandwidth only.
 */

/** Source window of xdelta3 (-B): its memory bound; changes move an index's bytes far less than this. */
export const XDELTA3_SOURCE_WINDOW = 64 * 1024 * 1024;

/** Address space one xdelta3 child may take (prlimit --as): the window, its buffers and the program. */
const XDELTA3_ADDRESS_SPACE = 512 * 1024 * 1024;

/** The xdelta3 program, or null when it is not installed (deltas are then neither made nor applied). */
export function xdelta3Path(): string | null {
  return Bun.which('xdelta3');
}

/** The sentence logged and shown when xdelta3 is missing. */
export const XDELTA3_MISSING = 'xdelta3 is not installed (apt-get install xdelta3): no deltas, full files only';

/** Limits of one xdelta3 run. */
export interface DeltaRunLimits {
  /** Largest output file written (prlimit --fsize): a run writing more is killed. */
  maxOutputBytes: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** The xdelta3 command line that writes to `out` the delta turning `from` into `to` (tools/bench/delta.bench.ts measures it). */
export function makeDeltaArgv(xdelta3: string, from: string, to: string, out: string): string[] {
  return [xdelta3, '-e', '-f', '-q', '-B', String(XDELTA3_SOURCE_WINDOW), '-s', from, to, out];
}

/** The xdelta3 command line that writes to `out` the file `delta` makes of `from`. */
export function applyDeltaArgv(xdelta3: string, from: string, delta: string, out: string): string[] {
  return [xdelta3, '-d', '-f', '-q', '-B', String(XDELTA3_SOURCE_WINDOW), '-s', from, delta, out];
}

/** Writes to `out` the delta that turns `from` into `to`; rejects with the reason. */
export function makeDelta(xdelta3: string, from: string, to: string, out: string, limits: DeltaRunLimits): Promise<void> {
  return runXdelta3(makeDeltaArgv(xdelta3, from, to, out), limits);
}

/** Writes to `out` the file `delta` makes of `from`; rejects with the reason. The caller verifies `out`. */
export function applyDelta(xdelta3: string, from: string, delta: string, out: string, limits: DeltaRunLimits): Promise<void> {
  return runXdelta3(applyDeltaArgv(xdelta3, from, delta, out), limits);
}

/** Runs xdelta3 under prlimit (output size, address space) with a deadline; rejects naming the exit and stderr's last line. */
async function runXdelta3(argv: string[], limits: DeltaRunLimits): Promise<void> {
  const prlimit = Bun.which('prlimit');
  const bounded = prlimit ? [prlimit, `--fsize=${limits.maxOutputBytes}`, `--as=${XDELTA3_ADDRESS_SPACE}`, '--', ...argv] : argv;
  const child = Bun.spawn(bounded, { stdin: 'ignore', stdout: 'ignore', stderr: 'pipe' });
  const kill = () => child.kill('SIGKILL');
  const timer = setTimeout(kill, limits.timeoutMs);
  limits.signal?.addEventListener('abort', kill, { once: true });
  try {
    const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
    if (code === 0) return;
    const last = stderr.trim().split('\n').pop()?.slice(0, 200) ?? '';
    const why = child.signalCode === 'SIGXFSZ' ? `output past ${limits.maxOutputBytes} bytes` : child.signalCode ? `killed by ${child.signalCode}` : `exit ${code}`;
    throw new Error(`xdelta3 failed (${why})${last ? `: ${last}` : ''}`);
  } finally {
    clearTimeout(timer);
    limits.signal?.removeEventListener('abort', kill);
  }
}
