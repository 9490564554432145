/**
 * The first start's build of the embedded default, in a child process: a
 * build's peak memory is several times the serving footprint, and memory a
 * process has touched is not all returned to the system, so the server that
 * serves afterwards must not be the one that built. The child is this very
 * program's `build-index --default` (src/cli.ts), sharing the terminal so
 * its progress bar and summary show as they would run by hand.
 */
import { join } from 'node:path';
import { buildChildEnv } from './build-child-env.ts';

/** The child's command line: `bun src/cli.ts build-index --default ...`, or the compiled binary's. */
function firstBuildCommand(out: string, feedsDir: string, compiled: boolean): string[] {
  const self = compiled ? [process.execPath] : [process.execPath, join(import.meta.dir, '..', 'cli.ts')];
  return [...self, 'build-index', '--default', '--out', out, '--feeds-dir', feedsDir];
}

/**
 * Builds the default index at `out` in a child process (stdin closed, stderr
 * shared: progress and errors show); resolves when it exits. Throws, naming
 * the exit, when the build fails (its own error was printed above).
 */
export async function buildDefaultInChild(out: string, feedsDir: string, compiled: boolean, log: (line: string) => void = (l) => console.error(l)): Promise<void> {
  const child = Bun.spawn(firstBuildCommand(out, feedsDir, compiled), { stdin: 'ignore', stdout: 'ignore', stderr: 'inherit', env: buildChildEnv(process.env) });
  log(`building in child process ${child.pid} (the server starts once it is done)`);
  const code = await child.exited;
  if (code === 0) return;
  const signal = child.signalCode;
  // A build killed outright said nothing; the kernel's out-of-memory killer is the usual sender of SIGKILL.
  const why = signal === 'SIGKILL' ? 'killed by SIGKILL: out of memory, or killed by hand' : signal ? `killed by ${signal}` : `exited ${code}; its error is above`;
  throw new Error(`the first build of ${out} failed (child ${child.pid} ${why})`);
}
