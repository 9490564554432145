/**
 * The keys command (`bun run keys`: src/cli.ts keys) spawned as operators run it, against the database named
 * by IPINTEL_DB (a SQLite file in keys-script.test.ts, a postgres:// URL in
 * postgres.test.ts), with a running store beside it as the server.
 */
import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { openAccounts } from '../../../src/accounts/store.ts';

/** Runs the script with IPINTEL_DB=`db`; returns exit code and output. */
export async function runKeys(db: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(['bun', 'run', 'src/cli.ts', 'keys', ...args], {
    cwd: join(import.meta.dir, '../../..'),
    env: { ...process.env, IPINTEL_DB: db },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const killer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
  try {
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, stdout, stderr };
  } finally {
    clearTimeout(killer);
  }
}

const lastLine = (s: string) => s.trimEnd().split('\n').at(-1)!;

/** Registers the script's tests; `db` is called once the suite's beforeAll has run. */
export function keysScriptBehaviour(db: () => string): void {
  const keys = (...args: string[]) => runKeys(db(), ...args);

  describe('keys script', () => {
    test('create makes the user and a pro key, printed alone on the last line; a running server picks up create and revoke', async () => {
      const server = await openAccounts(db(), { flushIntervalMs: 0, syncIntervalMs: 0 });
      try {
        const r = await keys('create', '--email', 'Invitee@Example.test', '--tier', 'pro');
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
        const key = lastLine(r.stdout);
        expect(key).toMatch(/^ipi_[A-Za-z0-9_-]{43}$/);
        // The running server sees the script's write after its periodic sync.
        expect(server.resolveApiKey(key)).toBeNull();
        await server.syncKeys();
        const resolved = server.resolveApiKey(key);
        expect(resolved?.tier).toBe('pro');
        expect((await server.getUser(resolved!.userId))?.email).toBe('invitee@example.test');
        expect((await server.getUser(resolved!.userId))?.tier).toBe('pro');

        // list shows the same data as /auth/keys, without the secret.
        const list = await keys('list', '--email', 'invitee@example.test', '--json');
        expect(list.code).toBe(0);
        expect(list.stdout).not.toContain(key);
        const listed = JSON.parse(list.stdout).keys;
        expect(listed).toHaveLength(1);
        expect(listed[0]).toMatchObject({ id: resolved!.keyId, tier: 'pro', status: 'active', prefix: key.slice(0, 12) });
        const table = await keys('list', '--email', 'invitee@example.test');
        expect(table.stdout).toContain(resolved!.keyId);
        expect(table.stdout).not.toContain(key);

        // revoke: the server refuses the key after its next sync.
        const rev = await keys('revoke', resolved!.keyId);
        expect(rev.code).toBe(0);
        expect(rev.stdout).toContain('revoked');
        await server.syncKeys();
        expect(server.resolveApiKey(key)).toBeNull();
        expect(JSON.parse((await keys('list', '--email', 'invitee@example.test', '--json')).stdout).keys[0].status).toBe('revoked');
        expect((await keys('revoke', resolved!.keyId)).stdout).toContain('already revoked');
      } finally {
        await server.close();
      }
    }, 60_000);

    test('a second create for the same email adds a key to the same user; free never lowers a pro account', async () => {
      const a = await keys('create', '--email', 'same@example.test', '--tier', 'pro');
      const b = await keys('create', '--email', 'same@example.test', '--tier', 'free', '--name', 'spare');
      expect(a.code).toBe(0);
      expect(b.code).toBe(0);
      const store = await openAccounts(db(), { flushIntervalMs: 0, syncIntervalMs: 0 });
      try {
        const ka = store.resolveApiKey(lastLine(a.stdout))!;
        const kb = store.resolveApiKey(lastLine(b.stdout))!;
        expect(kb.userId).toBe(ka.userId);
        expect(kb.tier).toBe('free');
        expect((await store.getUser(ka.userId))!.tier).toBe('pro');
      } finally {
        await store.close();
      }
    }, 60_000);

    test('bad input gets a clear message and a non-zero exit, never a stack trace', async () => {
      const cases: [string[], number, RegExp][] = [
        [[], 2, /usage:/],
        [['frobnicate'], 2, /unknown command/],
        [['create', '--email', 'not-an-email', '--tier', 'free'], 2, /email/],
        [['create', '--email', 'x@example.test', '--tier', 'gold'], 2, /tier/],
        [['create', '--email', 'x@example.test'], 2, /tier/],
        [['create', '--email', 'x@example.test', '--tier', 'free', '--bogus'], 2, /Unknown option/i],
        [['list', '--email', 'nobody@example.test'], 1, /no user/],
        [['revoke'], 2, /exactly one/],
        [['revoke', "' OR 1=1 --"], 1, /no key/],
      ];
      for (const [args, code, message] of cases) {
        const r = await keys(...args);
        expect(r.code).toBe(code);
        expect(r.stderr).toMatch(message);
        expect(r.stderr).not.toMatch(/\n\s+at /);
        expect(r.stdout).toBe('');
      }
    }, 120_000);

    test('SQL injection in email and name is stored verbatim as data', async () => {
      const name = "x'); DROP TABLE users; --";
      const r = await keys('create', '--email', "o'hara+test@example.test", '--tier', 'free', '--name', name);
      expect(r.code).toBe(0);
      const list = JSON.parse((await keys('list', '--email', "o'hara+test@example.test", '--json')).stdout);
      expect(list.keys[0].name).toBe(name);
    }, 60_000);
  });
}
