/**
 * Compiling the single binary the way `bun run compile` does (same flags,
 * another output path) and running it in a clean environment: no IPINTEL_*
 * variables from the test process, a cwd outside the source tree.
 */
import { resolve } from 'node:path';
import { compileArgv } from '../../tools/release.ts';

const REPO = resolve(import.meta.dir, '../..');

/** Compiles src/cli.ts with the package.json "compile" script's flags into `outfile`. */
export async function compileBinary(outfile: string): Promise<void> {
  const result = await run(compileArgv(outfile), { cwd: REPO, timeoutMs: 120_000, env: {} });
  if (result.code !== 0) throw new Error(`compile failed (${result.code}): ${result.stderr}`);
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion (killed at `timeoutMs`) with only PATH and HOME plus `env`. */
export async function run(argv: string[], opts: { cwd: string; env?: Record<string, string>; timeoutMs?: number }): Promise<RunResult> {
  const proc = Bun.spawn(argv, {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...opts.env },
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: opts.timeoutMs ?? 30_000,
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

export interface ServingBinary {
  url: string;
  /** Everything the server wrote to stderr so far. */
  log(): string;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number>;
}

/** Starts `<bin> serve` with PORT=0 on 127.0.0.1 and waits (up to `timeoutMs`) for its "listening" line. */
export async function serveBinary(bin: string, opts: { cwd: string; env: Record<string, string>; timeoutMs?: number }): Promise<ServingBinary> {
  const proc = Bun.spawn([bin, 'serve'], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', PORT: '0', HOST: '127.0.0.1', IPINTEL_DNS_SERVERS: '127.0.0.1:9', ...opts.env },
    stdout: 'ignore',
    stderr: 'pipe',
  });
  let log = '';
  const reader = proc.stderr.getReader();
  const decoder = new TextDecoder();
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let port: string | undefined;
  while (!port) {
    const left = deadline - Date.now();
    const next = left > 0 ? await Promise.race([reader.read(), Bun.sleep(left).then(() => null)]) : null;
    if (next === null || next.done) {
      proc.kill('SIGKILL');
      throw new Error(`ipintel serve did not start: ${log}`);
    }
    log += decoder.decode(next.value, { stream: true });
    port = /listening on 127\.0\.0\.1:(\d+)/.exec(log)?.[1];
  }
  // Keep draining stderr so the child never blocks on a full pipe.
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      log += decoder.decode(value, { stream: true });
    }
  })();
  return {
    url: `http://127.0.0.1:${port}`,
    log: () => log,
    async stop() {
      proc.kill('SIGTERM');
      const code = await Promise.race([proc.exited, Bun.sleep(10_000).then(() => -1)]);
      if (code === -1) proc.kill('SIGKILL');
      return code;
    },
  };
}
