/**
 * The override table bundled on its own (as a bundled worker entry would
 * carry it): its empty table must not be built while the module is still
 * defining the classes it needs.
 */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

test('the override table module loads from a bundle and its empty table answers nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipintel-bundled-table-'));
  try {
    const out = await Bun.build({ entrypoints: [join(import.meta.dir, '../../src/lookup/overrides/table.ts')], target: 'bun', format: 'esm', outdir: dir });
    expect(out.success).toBe(true);
    const mod = await import(out.outputs[0].path);
    const empty = mod.OverrideTable.EMPTY;
    expect(empty).toBe(mod.OverrideTable.EMPTY);
    expect(empty.size).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
