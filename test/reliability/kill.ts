/** Spawning a command and SIGKILLing it at a chosen moment, for the crash tests. */
import { resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dir, '../..');

export interface KilledRun {
  /** True when SIGKILL landed before the process finished on its own. */
  killed: boolean;
  exitCode: number | null;
  stdoutLines: string[];
  stderr: string;
}

export interface KillPlan {
  /** Kill this many ms after spawning. */
  afterMs?: number;
  /** Kill as soon as stdout has this many lines. */
  afterLines?: number;
  /** Kill as soon as this returns true (polled every few ms). */
  when?: () => boolean;
  /** Give up waiting (and kill) after this long. */
  limitMs: number;
}

/** Runs `argv` in the repository root with `env` (plus PATH/HOME) and SIGKILLs it per `plan`. */
export async function runAndKill(argv: string[], env: Record<string, string>, plan: KillPlan): Promise<KilledRun> {
  const proc = Bun.spawn(argv, {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  let exited = false;
  let killed = false;
  const lines: string[] = [];
  const kill = () => {
    if (exited || killed) return;
    killed = true;
    proc.kill('SIGKILL');
  };
  const stdoutDone = (async () => {
    const decoder = new TextDecoder();
    let pending = '';
    for await (const chunk of proc.stdout) {
      pending += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        lines.push(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
        if (plan.afterLines !== undefined && lines.length >= plan.afterLines) kill();
      }
    }
  })();
  const stderrText = new Response(proc.stderr).text();
  const timers: ReturnType<typeof setTimeout>[] = [setTimeout(kill, plan.limitMs)];
  if (plan.afterMs !== undefined) timers.push(setTimeout(kill, plan.afterMs));
  let poll: ReturnType<typeof setInterval> | null = null;
  if (plan.when) {
    const when = plan.when;
    poll = setInterval(() => when() && kill(), 2);
  }
  const exitCode = await proc.exited;
  exited = true;
  for (const t of timers) clearTimeout(t);
  if (poll) clearInterval(poll);
  await stdoutDone;
  // A kill that raced with a normal exit did not interrupt anything.
  const reallyKilled = killed && proc.signalCode === 'SIGKILL';
  return { killed: reallyKilled, exitCode, stdoutLines: lines, stderr: await stderrText };
}
