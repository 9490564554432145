/**
 * The real server as a child process (`bun run src/main.ts`), the way an
 * operator runs it: environment in, listening line on stderr out. Port 0
 * and loopback only, so soaks never collide with anything else.
 */
import { resolve } from 'node:path';
import type { Subprocess } from 'bun';
import { startScriptDefaults } from '../start-env.ts';

/** Repository root (the child runs from there, like `bun run start`). */
export const REPO_ROOT = resolve(import.meta.dir, '../..');

export interface ChildServer {
  url: string;
  port: number;
  pid: number;
  /** The last lines the child wrote on stderr (for failure reports). */
  stderrTail(): string[];
  /** Whether the child is still running. */
  alive(): boolean;
  /** SIGTERM (graceful: flushes usage, closes the database), SIGKILL after `graceMs`. Returns the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

const LISTENING = /ipintel listening on [^\s]+:(\d+) /;

/** Starts `bun run src/main.ts` with exactly `env` (plus PATH/HOME) and waits for its listening line. */
export async function startChildServer(env: Record<string, string>, startTimeoutMs = 60_000): Promise<ChildServer> {
  const proc: Subprocess<'ignore', 'ignore', 'pipe'> = Bun.spawn([process.execPath, 'run', 'src/main.ts'], {
    cwd: REPO_ROOT,
    // Only what the soak names: no IPINTEL_* from the caller's shell leaks in.
    // The defaults `bun run start` sets (the allocator's purge delay) apply as they would there.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', PORT: '0', HOST: '127.0.0.1', ...startScriptDefaults(), ...env },
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'pipe',
  });
  const tail: string[] = [];
  let exited = false;
  void proc.exited.then(() => (exited = true));
  const port = await new Promise<number>((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start within ${startTimeoutMs} ms:\n${tail.join('\n')}`)), startTimeoutMs);
    void proc.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${tail.join('\n')}`));
    });
    // Keep draining stderr for the child's whole life so its pipe never fills.
    void (async () => {
      const decoder = new TextDecoder();
      let pending = '';
      for await (const chunk of proc.stderr) {
        pending += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = pending.indexOf('\n')) >= 0) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          tail.push(line);
          if (tail.length > 50) tail.shift();
          const m = LISTENING.exec(line);
          if (m) {
            clearTimeout(timer);
            resolvePort(Number(m[1]));
          }
        }
      }
    })();
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    pid: proc.pid,
    stderrTail: () => [...tail],
    alive: () => !exited,
    async stop(graceMs = 10_000) {
      if (exited) return proc.exitCode;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      const code = await proc.exited;
      clearTimeout(timer);
      return code;
    },
  };
}
