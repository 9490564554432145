/** A build removes temp files that killed builds left beside its output, and only those. */
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeCollected } from '../../index-builder/build.ts';
import { addBuiltins } from '../../index-builder/builtins.ts';
import { Collector } from '../../index-builder/merge/collector.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-stale-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('dead writers’ temp files go, a live writer’s stays', () => {
  const out = join(dir, 'ipintel.idx');
  const dead = join(dir, '.ipintel.idx.tmp-2147480000-1700000000000'); // no such process
  const live = join(dir, `.ipintel.idx.tmp-${process.pid}-1700000000000`);
  const other = join(dir, '.other.idx.tmp-2147480000-1');
  for (const f of [dead, live, other]) writeFileSync(f, 'partial');
  const c = new Collector();
  addBuiltins(c);
  writeCollected(c, [], { out, attributions: [] });
  expect(existsSync(out)).toBe(true);
  expect(existsSync(dead)).toBe(false);
  expect(existsSync(live)).toBe(true);
  expect(existsSync(other)).toBe(true);
});
