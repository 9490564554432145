/** Shared by the refresher tests: a small server-built index and the real refresh child with a build counter. */
import { join } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import { runRefreshChild } from '../../src/feeds/refresh-child.ts';
import type { RefreshEvent, RefreshRequest } from '../../src/feeds/refresh-round.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';

const CLOUDFLARE = 'cloud/cloudflare-ips-v4.txt';

/** A small index the server built itself (one cloud list), as a first start leaves it. */
export async function smallServerIndex(out: string): Promise<void> {
  const src = join(FIXTURE_FEEDS_DIR, CLOUDFLARE);
  await buildIndex({ sources: [{ options: { type: 'cidr-list', category: 'content', path: src }, absPath: src, displayPath: CLOUDFLARE }], out, quiet: true, managedBy: 'server' });
}

/** The real refresh child (a generous cap), recording each round that built into `builds`. */
export function countingBuilds(builds: RefreshRequest[]) {
  return (req: RefreshRequest, signal: AbortSignal, onEvent: (e: RefreshEvent) => void) =>
    runRefreshChild(req, {
      compiled: false,
      memoryCapBytes: 2048 * 1048576,
      timeBudgetMs: 120_000,
      signal,
      onEvent: (e) => {
        if (e.kind === 'building') builds.push(req);
        onEvent(e);
      },
    });
}

/** smallServerIndex in a child process: the builder's heap never grows the test process's (memory-measuring tests share it). */
export async function smallServerIndexInChild(out: string): Promise<void> {
  const child = Bun.spawn(['bun', '-e', `await (await import(${JSON.stringify(import.meta.path)})).smallServerIndex(${JSON.stringify(out)})`], { stderr: 'pipe' });
  if ((await child.exited) !== 0) throw new Error(`building ${out} failed: ${await new Response(child.stderr).text()}`);
}
