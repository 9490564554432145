/**
 * kill -9 while the accounts database is being written (the keys script,
 * and a loop of key grants + usage flushes): afterwards SQLite's integrity
 * check passes, every row is consistent, every commit that was reported
 * before the kill is there, and the store opens and resolves those keys.
 */
import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { Database } from 'bun:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAccounts } from '../../src/accounts/store.ts';
import { runAndKill } from './kill.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-crash-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Everything that must hold of a database after a crash; returns the problems found. */
function checkDatabase(path: string): string[] {
  const problems: string[] = [];
  const db = new Database(path, { readonly: false });
  try {
    const integrity = db.query('PRAGMA integrity_check').all() as { integrity_check: string }[];
    if (integrity.length !== 1 || integrity[0].integrity_check !== 'ok') problems.push(`integrity_check: ${JSON.stringify(integrity)}`);
    const fk = db.query('PRAGMA foreign_key_check').all();
    if (fk.length > 0) problems.push(`foreign_key_check: ${JSON.stringify(fk.slice(0, 3))}`);
    const tables = (db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name);
    // A database that never got past creation has no tables yet: that is consistent (the next open migrates it).
    if (!tables.includes('api_keys')) return problems;
    const badKeys = db
      .query(
        `SELECT k.id FROM api_keys k LEFT JOIN users u ON u.id = k.user_id
         WHERE u.id IS NULL OR k.tier NOT IN ('free','pro') OR length(k.secret_hash) != 64 OR k.secret_hash GLOB '*[^0-9a-f]*'
            OR k.prefix NOT LIKE 'ipi_%' OR (k.tier = 'pro' AND u.tier != 'pro')`,
      )
      .all();
    if (badKeys.length > 0) problems.push(`inconsistent key rows: ${JSON.stringify(badKeys.slice(0, 3))}`);
    // Minute and day rows are written in one transaction: their totals agree.
    const m = (db.query('SELECT coalesce(sum(count), 0) AS n FROM usage_minutes').get() as { n: number }).n;
    const d = (db.query('SELECT coalesce(sum(count), 0) AS n FROM usage_days').get() as { n: number }).n;
    if (m !== d) problems.push(`usage minutes total ${m} != days total ${d}`);
  } finally {
    db.close();
  }
  return problems;
}

describe('kill -9 during `bun run keys create`', () => {
  const CREATE = [process.execPath, 'run', 'src/cli.ts', 'keys', 'create', '--email', 'crash@example.test', '--tier', 'pro'];
  test(
    'at every moment, the database (fresh each time) stays valid and opens; a finished run left its key',
    async () => {
      // Kill times are fractions of one measured run, so they span start-up, migration,
      // the insert and exit however fast or loaded the machine is.
      const t0 = performance.now();
      const whole = await runAndKill(CREATE, { IPINTEL_DB: join(dir, 'script-measure.sqlite') }, { limitMs: 30_000 });
      const durationMs = performance.now() - t0;
      expect(whole.exitCode).toBe(0);
      const fractions = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.2];
      let killedCount = 0;
      let completed = 0;
      for (const fraction of fractions) {
        const dbPath = join(dir, `script-${fraction}.sqlite`);
        const run = await runAndKill(CREATE, { IPINTEL_DB: dbPath }, { afterMs: Math.round(durationMs * fraction), limitMs: 30_000 });
        if (run.killed) killedCount++;
        else {
          expect(run.exitCode).toBe(0);
          completed++;
        }
        expect(checkDatabase(dbPath)).toEqual([]);
        // The store (server and script alike) opens what the crash left, migrating it if needed.
        const store = await openAccounts(dbPath, { flushIntervalMs: 0, syncIntervalMs: 0 });
        try {
          const printed = run.stdoutLines.at(-1) ?? '';
          if (/^ipi_[A-Za-z0-9_-]{43}$/.test(printed)) expect((await store.resolveApiKey(printed))?.tier).toBe('pro');
          // A second, uninterrupted create on the same file works.
          expect((await store.grantKeyByEmail('after@example.test', 'free', 'after crash')).created.secret).toMatch(/^ipi_/);
        } finally {
          await store.close();
        }
        expect(checkDatabase(dbPath)).toEqual([]);
      }
      // Not vacuous: most runs were really interrupted (run times vary, so not all).
      expect(killedCount).toBeGreaterThanOrEqual(5);
      expect(killedCount + completed).toBe(fractions.length);
    },
    120_000,
  );
});

describe('kill -9 in the middle of a stream of key grants and usage flushes', () => {
  test(
    'every reported commit survives, nothing half-written is visible, and the store resolves the keys',
    async () => {
      const dbPath = join(dir, 'loop.sqlite');
      const committedKeys: string[] = [];
      let committedUsage = 0;
      // Cumulative: each round kills a writer on the database the previous kills left.
      for (const afterLines of [2, 3, 9, 40, 151, 400]) {
        const run = await runAndKill([process.execPath, 'tools/soak/key-loop.ts'], { IPINTEL_DB: dbPath }, { afterLines, limitMs: 60_000 });
        expect(run.killed).toBe(true);
        let roundUsage = 0;
        for (const line of run.stdoutLines) {
          const [what, a, b] = line.split(' ');
          if (what === 'key') committedKeys.push(b);
          if (what === 'usage') roundUsage = Number(a);
        }
        committedUsage += roundUsage;
        expect(checkDatabase(dbPath)).toEqual([]);
      }
      expect(committedKeys.length).toBeGreaterThan(100);
      const store = await openAccounts(dbPath, { flushIntervalMs: 0, syncIntervalMs: 0 });
      try {
        for (const secret of committedKeys) expect(store.resolveApiKey(secret)).not.toBeNull();
      } finally {
        await store.close();
      }
      // Reported usage was committed; a flush that committed just before the kill without being reported may add more.
      const db = new Database(dbPath, { readonly: true });
      const total = (db.query('SELECT coalesce(sum(count), 0) AS n FROM usage_days').get() as { n: number }).n;
      db.close();
      expect(total).toBeGreaterThanOrEqual(committedUsage);
      expect(total).toBeLessThanOrEqual(committedUsage + 6 * 20);
    },
    120_000,
  );
});
