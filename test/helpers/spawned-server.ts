/**
 * The real server as operators run it (`bun src/main.ts`), in its own
 * process on 127.0.0.1 (port 0) over the fixture index: for tests that
 * need several workers, a process's own descriptor limit, or its resident
 * memory measured from outside.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readLines } from '../../src/file-io/read-lines.ts';
import { fixtureIndexPath } from './fixture-index.ts';

const ROOT = join(import.meta.dir, '../..');

export interface SpawnedServer {
  url: string;
  proc: Bun.Subprocess;
  /** Every line the server wrote to stderr so far. */
  log: string[];
  /** The process's resident memory (VmRSS), MB. */
  rssMb(): number;
  /** Whether the process is still running. */
  alive(): boolean;
  stop(): Promise<void>;
}

/**
 * Starts the server with `env` over the defaults (fixture index, in-memory
 * database, no feed refresh); `shell` wraps the command (e.g. a `ulimit`),
 * the server's argv being appended as "$@". Resolves once it listens.
 */
export async function spawnServer(env: Record<string, string>, options: { shell?: string; timeoutMs?: number } = {}): Promise<SpawnedServer> {
  const argv = [process.execPath, 'src/main.ts'];
  const cmd = options.shell ? ['sh', '-c', `${options.shell}; exec "$@"`, 'sh', ...argv] : argv;
  const proc = Bun.spawn(cmd, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      IPINTEL_INDEX: await fixtureIndexPath(),
      IPINTEL_DB: ':memory:',
      IPINTEL_HISTORY: 'off',
      IPINTEL_DNS_SERVERS: '127.0.0.1:9',
      IPINTEL_FEEDS_REFRESH: 'off',
      ...env,
    },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const log: string[] = [];
  const collect = (stream: ReadableStream<Uint8Array>) => readLines(stream, (l) => log.push(l)).catch(() => undefined);
  void collect(proc.stderr as ReadableStream<Uint8Array>);
  void collect(proc.stdout as ReadableStream<Uint8Array>);
  const end = Date.now() + (options.timeoutMs ?? 60_000);
  let line: string | undefined;
  while (!(line = log.find((l) => l.startsWith('ipintel listening on')))) {
    if (proc.exitCode !== null || Date.now() > end) {
      proc.kill();
      throw new Error(`server did not start (exit ${proc.exitCode}):\n${log.join('\n')}`);
    }
    await Bun.sleep(50);
  }
  const port = Number(/:(\d+) \(index/.exec(line)![1]);
  return {
    url: `http://127.0.0.1:${port}`,
    proc,
    log,
    rssMb() {
      const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'));
      return m ? Number(m[1]) / 1024 : NaN;
    },
    alive: () => proc.exitCode === null && proc.signalCode === null,
    async stop() {
      if (proc.exitCode === null) {
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
        await proc.exited;
        clearTimeout(timer);
      }
    },
  };
}
