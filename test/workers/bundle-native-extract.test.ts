/**
 * The worker bundle's msgpackr-extract (src/host/workers/bundle-native-extract.ts):
 * the prebuilt binary chosen when the bundle is built, copied beside it and
 * loaded by a bundled `require('msgpackr-extract')` without the run-time
 * chooser (node-gyp-build-optional-packages, detect-libc).
 */
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000);
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { nativeExtractPlugin } from '../../src/host/workers/bundle-native-extract.ts';

const ROOT = resolve(import.meta.dir, '../..');
const work = mkdtempSync(join(tmpdir(), 'ipintel-native-extract-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

test('a bundled require of msgpackr-extract loads the binary beside the bundle, and msgpackr unpacks with it', async () => {
  const plugin = nativeExtractPlugin(ROOT);
  expect(plugin).not.toBeNull(); // this install has a prebuilt binary for this machine
  const entry = join(ROOT, 'test', 'workers', `.native-extract-entry-${process.pid}.ts`);
  writeFileSync(
    entry,
    `import { isNativeAccelerationEnabled, pack, unpack } from 'msgpackr';\n` +
      `const text = 'x'.repeat(300);\n` +
      `console.log(JSON.stringify({ native: isNativeAccelerationEnabled, same: unpack(pack({ a: [text, text] })).a[1] === text }));\n`,
  );
  try {
    const built = await Bun.build({ entrypoints: [entry], outdir: join(work, 'out'), target: 'bun', format: 'cjs', plugins: [plugin!] });
    expect(built.success).toBe(true);
    const files = readdirSync(join(work, 'out'));
    expect(files.some((name) => name.endsWith('.node'))).toBe(true);
    const code = readFileSync(join(work, 'out', files.find((name) => name.endsWith('.js'))!), 'utf8');
    expect(code).not.toContain('detect-libc');
    const run = Bun.spawnSync(['bun', join(work, 'out', files.find((name) => name.endsWith('.js'))!)], { cwd: work });
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout.toString())).toEqual({ native: true, same: true });
  } finally {
    rmSync(entry, { force: true });
  }
});

test('a tree without msgpackr-extract gets no plugin (msgpackr then runs without it)', () => {
  expect(nativeExtractPlugin(work)).toBeNull();
});
