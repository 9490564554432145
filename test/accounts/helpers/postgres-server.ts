/**
 * A throwaway PostgreSQL server for tests: Debian's binaries (package
 * `postgresql`, under /usr/lib/postgresql/<version>/bin), a fresh cluster in
 * a temporary folder, listening on 127.0.0.1 only, on a free port. PostgreSQL
 * refuses to run as root, so under root the cluster belongs to the
 * `postgres` user and its commands run through runuser.
 */
import { SQL } from 'bun';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/** Why PostgreSQL tests cannot run here, or null when the binaries are present. */
export function postgresUnavailable(): string | null {
  return postgresBinDir() ? null : 'no PostgreSQL binaries under /usr/lib/postgresql/*/bin (apt-get install -y postgresql)';
}

/** The newest installed PostgreSQL bin folder, or null. */
export function postgresBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')) && existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0]!, 'bin') : null;
}

export interface TestPostgres {
  /** postgres://… of the maintenance database `postgres` (for ALTER DATABASE and the like). */
  adminUrl: string;
  /** postgres://… of a database on this server, created on first use. */
  database(name: string): Promise<string>;
  /** Stops the server and removes its files. */
  stop(): Promise<void>;
}

const RUN_AS = 'postgres';

/** Runs a PostgreSQL command (as `postgres` when we are root); throws with its output on failure or after `timeoutMs`. */
function run(bin: string, args: string[], timeoutMs: number): void {
  const asRoot = userInfo().uid === 0;
  const argv = asRoot ? ['runuser', '-u', RUN_AS, '--', bin, ...args] : [bin, ...args];
  const r = Bun.spawnSync(argv, { stdout: 'pipe', stderr: 'pipe', timeout: timeoutMs, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' } });
  if (r.exitCode !== 0) {
    throw new Error(`${argv.join(' ')} failed (exit ${r.exitCode}${r.signalCode ? `, ${r.signalCode}` : ''}):\n${r.stdout.toString()}${r.stderr.toString()}`);
  }
}

/** A port nobody listens on right now (PostgreSQL takes it a moment later; a clash makes start fail, and we retry). */
function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

/** Starts a fresh cluster; throws (never skips) when anything goes wrong. */
export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(postgresUnavailable()!);
  const dir = mkdtempSync(join(tmpdir(), 'ipintel-pg-'));
  if (userInfo().uid === 0) {
    const pw = Bun.spawnSync(['id', '-u', RUN_AS], { stdout: 'pipe' });
    const gid = Bun.spawnSync(['id', '-g', RUN_AS], { stdout: 'pipe' });
    if (pw.exitCode !== 0) throw new Error(`running as root and there is no '${RUN_AS}' user to own the test cluster`);
    chownSync(dir, Number(pw.stdout.toString()), Number(gid.stdout.toString()));
  }
  const data = join(dir, 'data');
  let port = 0;
  try {
    run(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], 60_000);
    for (let attempt = 1; ; attempt++) {
      port = freePort();
      // Loopback only, the socket in our own folder, and durability off: the data is thrown away.
      const opts = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
      try {
        run(join(bin, 'pg_ctl'), ['-D', data, '-o', opts, '-l', join(dir, 'server.log'), '-w', '-t', '30', 'start'], 45_000);
        break;
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const base = `postgres://postgres@127.0.0.1:${port}`;
  const created = new Map<string, string>();
  return {
    adminUrl: `${base}/postgres`,
    async database(name) {
      const known = created.get(name);
      if (known) return known;
      const admin = new SQL({ url: `${base}/postgres`, max: 1 });
      try {
        await admin.unsafe(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
      } finally {
        await admin.close();
      }
      const url = `${base}/${encodeURIComponent(name)}`;
      created.set(name, url);
      return url;
    },
    async stop() {
      try {
        run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop'], 45_000);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
