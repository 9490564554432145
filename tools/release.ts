/**
 * `bun run release --out DIR [--targets linux-x64,linux-arm64,...]`: the
 * single binary for each Linux target, compiled with the flags of
 * `bun run compile`, plus SHA256SUMS (the `sha256sum -c` format), into DIR.
 * Cross targets need Bun's runtime for that machine, which `bun build`
 * fetches from the npm registry (@oven/bun-linux-*) on first use and caches.
 * The musl binaries need libstdc++ and libgcc where they run (Alpine: apk add libstdc++ libgcc).
 */
import { mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import packageJson from '../package.json' with { type: 'json' };

/** Release file name -> Bun compile target. */
export const RELEASE_TARGETS: Readonly<Record<string, string>> = {
  'linux-x64': 'bun-linux-x64',
  'linux-arm64': 'bun-linux-arm64',
  'linux-x64-musl': 'bun-linux-x64-musl',
  'linux-arm64-musl': 'bun-linux-arm64-musl',
};

const REPO = resolve(import.meta.dir, '..');

/** The argv of package.json's "compile" script writing `outfile` instead of dist/ipintel, for `target` (default: this machine). */
export function compileArgv(outfile: string, target?: string): string[] {
  const script = packageJson.scripts.compile;
  if (!script.includes('--outfile dist/ipintel')) throw new Error(`unexpected compile script: ${script}`);
  const argv = script.replace('--outfile dist/ipintel', `--outfile ${outfile}`).split(/\s+/);
  return target ? [...argv.slice(0, 3), `--target=${target}`, ...argv.slice(3)] : argv;
}

/** Compiles `ipintel-<name>` for each target name into `outDir` (each atomically), then writes SHA256SUMS; returns the file names. */
export async function release(outDir: string, names: readonly string[], log: (line: string) => void = (l) => console.error(l)): Promise<string[]> {
  for (const name of names) if (!RELEASE_TARGETS[name]) throw new Error(`unknown target ${name} (known: ${Object.keys(RELEASE_TARGETS).join(', ')})`);
  mkdirSync(outDir, { recursive: true });
  const sums: string[] = [];
  for (const name of names) {
    const file = `ipintel-${name}`;
    const partial = join(outDir, `.${file}.partial`);
    const started = performance.now();
    log(`release: compiling ${file} (${RELEASE_TARGETS[name]})`);
    const proc = Bun.spawn(compileArgv(partial, RELEASE_TARGETS[name]), { cwd: REPO, stdout: 'pipe', stderr: 'pipe' });
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) {
      rmSync(partial, { force: true });
      throw new Error(`compiling ${file} failed (exit ${code}): ${stderr.trim()}`);
    }
    renameSync(partial, join(outDir, file));
    const hasher = new Bun.CryptoHasher('sha256');
    for await (const chunk of Bun.file(join(outDir, file)).stream()) hasher.update(chunk);
    sums.push(`${hasher.digest('hex')}  ${file}\n`);
    log(`release: ${file}: ${(statSync(join(outDir, file)).size / 1048576).toFixed(1)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  writeFileSync(join(outDir, '.SHA256SUMS.partial'), sums.join(''));
  renameSync(join(outDir, '.SHA256SUMS.partial'), join(outDir, 'SHA256SUMS'));
  return names.map((n) => `ipintel-${n}`);
}

if (import.meta.main) {
  const usage = `usage: bun run release --out DIR [--targets ${Object.keys(RELEASE_TARGETS).join(',')}]`;
  let args;
  try {
    args = parseArgs({ args: process.argv.slice(2), strict: true, options: { out: { type: 'string' }, targets: { type: 'string' } } }).values;
  } catch (e) {
    console.error(`${(e as Error).message}\n${usage}`);
    process.exit(2);
  }
  if (!args.out) {
    console.error(usage);
    process.exit(2);
  }
  const outDir = resolve(args.out);
  try {
    const files = await release(outDir, args.targets ? args.targets.split(',') : Object.keys(RELEASE_TARGETS));
    console.log([...files, 'SHA256SUMS'].map((f) => join(outDir, f)).join('\n'));
  } catch (e) {
    console.error(`release failed: ${(e as Error).message}`);
    process.exit(1);
  }
}
