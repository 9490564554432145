/**
 * The refresher's index build, in a child process at lower CPU priority so
 * a background build does not starve the serving process (and a build's
 * multi-GB peak is returned to the system when the child exits). The child
 * runs `refresh-build` (src/cli.ts), which writes the file atomically.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

/** What the child builds. */
export interface ChildBuildRequest {
  out: string;
  /** Default build: the data packages (unless `withDefaults` is false) plus `<feedsDir>/feeds.json`. */
  feedsDir: string;
  /** An operator's manifest instead of the feeds folder (IPINTEL_FEEDS_MANIFEST). */
  manifest: string | null;
  withDefaults: boolean;
}

export interface ChildBuildResult {
  ok: boolean;
  /** The child's last stderr lines when it failed. */
  detail: string;
  /** Wall-clock seconds the build took. */
  seconds?: number;
  /** The child's peak resident memory in bytes (null when the platform does not say). */
  peakRssBytes?: number | null;
}

/** A build taking longer than this is killed (the previous index keeps serving). */
const BUILD_DEADLINE_MS = 60 * 60_000;
/** Niceness of the build: below the server, above idle work. */
const BUILD_NICENESS = 10;

/** The command line of the child: `nice -n 10 bun src/cli.ts refresh-build ...` (or the compiled binary's). */
export function childCommand(req: ChildBuildRequest, compiled: boolean): string[] {
  const self = compiled ? [process.execPath] : [process.execPath, join(import.meta.dir, '..', 'cli.ts')];
  const args = ['refresh-build', '--out', req.out, ...(req.manifest ? ['--manifest', req.manifest] : ['--feeds-dir', req.feedsDir])];
  if (!req.withDefaults) args.push('--no-defaults');
  const nice = Bun.which('nice');
  return [...(nice ? [nice, '-n', String(BUILD_NICENESS)] : []), ...self, ...args];
}

/** Runs the build in a child process; resolves when it exits (never rejects). `signal` kills it (the server stopping). */
export async function buildInChild(req: ChildBuildRequest, compiled: boolean, signal?: AbortSignal): Promise<ChildBuildResult> {
  if (signal?.aborted) return { ok: false, detail: 'build not started: the server is stopping' };
  const t0 = performance.now();
  // stdout carries one line from a good build: its own peak memory (see runRefreshBuild).
  const child = Bun.spawn(childCommand(req, compiled), { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', env: process.env });
  const killer = setTimeout(() => child.kill('SIGKILL'), BUILD_DEADLINE_MS);
  const onAbort = () => child.kill('SIGTERM');
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    // Not the child's resourceUsage(): a spawned process starts with its parent's peak (peak-memory.ts).
    const reported = /^peak-rss-bytes=(\d+)$/m.exec(stdout);
    const measured = { seconds: Math.round((performance.now() - t0) / 100) / 10, peakRssBytes: reported ? Number(reported[1]) : null };
    if (code === 0) return { ok: true, detail: '', ...measured };
    const tail = stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 500);
    return { ok: false, detail: `build exited ${code}${tail ? `: ${tail}` : ''}`, ...measured };
  } finally {
    clearTimeout(killer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** `refresh-build --out <file> (--feeds-dir <dir> | --manifest <file>) [--no-defaults]`: the child's side; returns the exit code. */
export async function runRefreshBuild(argv: string[]): Promise<number> {
  let o;
  try {
    o = parseArgs({
      args: argv,
      strict: true,
      options: { out: { type: 'string' }, 'feeds-dir': { type: 'string' }, manifest: { type: 'string' }, 'no-defaults': { type: 'boolean' } },
    }).values;
    if (!o.out || !o['feeds-dir'] === !o.manifest) throw new Error('give --out and one of --feeds-dir or --manifest');
  } catch (e) {
    console.error(`refresh-build: ${(e as Error).message}`);
    return 2;
  }
  const { buildIndex } = await import('../../index-builder/build.ts');
  const { loadManifest } = await import('../../index-builder/manifest.ts');
  const { withDataDefaults } = await import('../../index-builder/default-sources.ts');
  const { findDataSources, findDefaultSources } = await import('./default-data.ts');
  let summary: Awaited<ReturnType<typeof buildIndex>>;
  try {
    if (o.manifest) {
      // The operator's manifest: its own file stays theirs, so the result is not marked as the server's.
      const manifest = loadManifest(o.manifest);
      summary = await buildIndex({ sources: o['no-defaults'] ? manifest : withDataDefaults(manifest, () => findDataSources()), out: o.out, quiet: true });
    } else {
      const manifestPath = join(o['feeds-dir']!, 'feeds.json');
      const sources = o['no-defaults'] ? (existsSync(manifestPath) ? loadManifest(manifestPath) : []) : findDefaultSources(o['feeds-dir']!);
      if (sources.length === 0) throw new Error(`${manifestPath}: no feed has a good copy; nothing to build`);
      summary = await buildIndex({ sources, out: o.out, quiet: true, managedBy: 'server' });
    }
    // For the parent (buildInChild): this build's own peak.
    console.log(`peak-rss-bytes=${summary.peakRssBytes}`);
    return 0;
  } catch (e) {
    console.error(`refresh-build: ${(e as Error).message}`);
    return 1;
  }
}
