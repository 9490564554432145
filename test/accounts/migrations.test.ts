/** The committed drizzle/ migrations match src/accounts/schema.ts (drizzle-kit finds nothing to generate). */
import { expect, test } from 'bun:test';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dir, '../..');

test('schema and generated migrations agree', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipintel-migrations-'));
  try {
    cpSync(join(root, 'drizzle'), join(dir, 'drizzle'), { recursive: true });
    const before = readdirSync(join(dir, 'drizzle')).sort();
    const proc = Bun.spawn(
      [join(root, 'node_modules/.bin/drizzle-kit'), 'generate', '--dialect', 'sqlite', '--schema', join(root, 'src/accounts/schema.ts'), '--out', './drizzle'],
      { cwd: dir, stdout: 'pipe', stderr: 'pipe' },
    );
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(code).toBe(0);
    expect(out).toContain('No schema changes');
    expect(readdirSync(join(dir, 'drizzle')).sort()).toEqual(before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
