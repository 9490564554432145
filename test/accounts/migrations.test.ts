/** The committed drizzle/ migrations match each dialect's schema (drizzle-kit finds nothing to generate). */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dir, '../..');

const dialects = [
  { dialect: 'sqlite', folder: 'drizzle/sqlite', schema: 'src/accounts/sqlite/schema.ts' },
  { dialect: 'postgresql', folder: 'drizzle/postgres', schema: 'src/accounts/postgres/schema.ts' },
] as const;

for (const d of dialects) {
  test(`${d.dialect}: schema and generated migrations agree`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ipintel-migrations-'));
    try {
      cpSync(join(root, d.folder), join(dir, 'out'), { recursive: true });
      const before = readdirSync(join(dir, 'out')).sort();
      expect(before.some((f) => f.endsWith('.sql'))).toBe(true);
      const proc = Bun.spawn(
        [join(root, 'node_modules/.bin/drizzle-kit'), 'generate', '--dialect', d.dialect, '--schema', join(root, d.schema), '--out', './out'],
        { cwd: dir, stdout: 'pipe', stderr: 'pipe' },
      );
      const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
      expect(code).toBe(0);
      expect(out).toContain('No schema changes');
      expect(readdirSync(join(dir, 'out')).sort()).toEqual(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
}
