/**
 * The worker bundle's built-ins loaded on first use
 * (src/host/workers/bundle-lazy-builtins.ts): lru-cache's browser build is
 * its node build but for the diagnostics channels, and prom-client's metric
 * classes format a bad value's error through a node:util loaded when asked.
 */
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000);
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { lazyBuiltinPlugins, lruCacheBrowserBuild } from '../../src/host/workers/bundle-lazy-builtins.ts';

const ROOT = resolve(import.meta.dir, '../..');
const work = mkdtempSync(join(tmpdir(), 'ipintel-lazy-builtins-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

test("the installed lru-cache's browser build is its node build but for the diagnostics channels", () => {
  const browser = lruCacheBrowserBuild(ROOT);
  expect(browser).not.toBeNull();
  const dist = join(ROOT, 'node_modules', 'lru-cache', 'dist', 'esm');
  const withoutMap = (file: string) => readFileSync(file, 'utf8').replace(/\/\/# sourceMappingURL=.*$/m, '');
  expect(withoutMap(join(dist, 'browser', 'index.js'))).toBe(withoutMap(join(dist, 'node', 'index.js')));
  expect(withoutMap(join(dist, 'browser', 'perf.js'))).toBe(withoutMap(join(dist, 'node', 'perf.js')));
  expect(readFileSync(join(dist, 'node', 'diagnostics-channel.js'), 'utf8')).toContain('node:diagnostics_channel');
  expect(readFileSync(browser!, 'utf8')).not.toContain('diagnostics_channel');
});

test('a bundle with the plugins loads neither built-in at start; the cache and the metrics work, a bad value is refused with its message', async () => {
  const entry = join(ROOT, 'test', 'workers', `.lazy-builtins-entry-${process.pid}.ts`);
  writeFileSync(
    entry,
    `import { LRUCache } from 'lru-cache';\n` +
      `const Counter = require('prom-client/lib/counter');\nconst Registry = require('prom-client/lib/registry');\n` +
      `const cache = new LRUCache<string, number>({ max: 1 }); cache.set('a', 1); cache.set('b', 2);\n` +
      `const registry = new Registry(); const counter = new Counter({ name: 'c', help: 'h', registers: [registry] }); counter.inc(2);\n` +
      `let refused = ''; try { counter.inc('x' as never); } catch (e) { refused = (e as Error).message; }\n` +
      `void registry.metrics().then((text: string) => console.log(JSON.stringify({ keys: [...cache.keys()], metrics: text.includes('c 2'), refused })));\n`,
  );
  try {
    const built = await Bun.build({ entrypoints: [entry], outdir: join(work, 'out'), target: 'bun', format: 'cjs', plugins: lazyBuiltinPlugins(ROOT) });
    expect(built.success).toBe(true);
    const file = join(work, 'out', readdirSync(join(work, 'out')).find((name) => name.endsWith('.js'))!);
    const code = readFileSync(file, 'utf8');
    expect(code).not.toContain('diagnostics_channel');
    // node:util only inside the getter that reads it when first asked.
    expect(code.match(/require\("(node:)?util"\)/g)?.length).toBeGreaterThan(0);
    expect(code).not.toMatch(/^\s*(var|const|let) util = require\("(node:)?util"\)/m);
    const run = Bun.spawnSync(['bun', file], { cwd: work });
    expect(run.stderr.toString()).toBe('');
    expect(JSON.parse(run.stdout.toString())).toEqual({ keys: ['b'], metrics: true, refused: 'Value is not a valid number: x' });
  } finally {
    rmSync(entry, { force: true });
  }
});
