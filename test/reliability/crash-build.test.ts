/**
 * kill -9 during `build-index`: the index already at the output path stays
 * byte-identical and opens; a reload picks up only that file; whatever the
 * crash left behind (a temp file beside the output) is never read by the
 * server. docs/reliability.md describes the leftovers.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IndexHolder } from '../../src/index/holder.ts';
import { IndexFileError } from '../../src/index/map-index-file.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';
import { REPO_ROOT, runAndKill } from './kill.ts';

const FEEDS = FIXTURE_FEEDS_DIR;
const dir = mkdtempSync(join(tmpdir(), 'ipintel-crash-build-'));
const out = join(dir, 'ipintel.idx');
const manifest = join(dir, 'feeds.json');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Big enough that a build takes seconds (parse, merge, write), small enough for a test.
writeFileSync(
  manifest,
  JSON.stringify({
    sources: [
      { type: 'asn-info', path: `${FEEDS}/asn/asn2org-asns.csv.gz` },
      { type: 'rir-delegated', path: `${FEEDS}/rir/delegated-apnic-20260618.gz` },
      { type: 'crawler-ranges', crawler: 'googlebot', path: `${FEEDS}/crawlers/googlebot.json` },
      { type: 'cloud-aws', path: `${FEEDS}/cloud/aws-ip-ranges.json` },
      { type: 'tor-exits', path: `${FEEDS}/tor/exit-addresses` },
      { type: 'bogons', path: `${FEEDS}/bogons/fullbogons-ipv4.txt` },
    ],
  }),
);

const BUILD = [process.execPath, 'index-builder/build-command.ts', '--manifest', manifest, '--out', out, '--quiet', '--no-defaults'];
const sha = (path: string) => new Bun.CryptoHasher('sha256').update(readFileSync(path)).digest('hex');
const tempFiles = () => readdirSync(dir).filter((f) => f.startsWith('.ipintel.idx.tmp-'));

let fullBuildMs = 0;
let reference = { sha: '', builtAt: '' };

beforeAll(async () => {
  const t0 = performance.now();
  const run = await runAndKill(BUILD, {}, { limitMs: 110_000 });
  fullBuildMs = performance.now() - t0;
  expect(run.killed).toBe(false);
  expect(run.exitCode).toBe(0);
  reference = { sha: sha(out), builtAt: IndexReader.open(out).meta.builtAt };
}, 120_000);

/** The live file is the reference one: same bytes, opens, and a reload serves it. */
function expectLiveIndexIntact(): void {
  expect(sha(out)).toBe(reference.sha);
  const holder = IndexHolder.open(out);
  expect(holder.reload().builtAt).toBe(reference.builtAt);
}

describe('kill -9 of the builder', () => {
  test(
    'at 20%, 50% and 80% of a build, the previous index is untouched and still serves',
    async () => {
      let killed = 0;
      for (const fraction of [0.2, 0.5, 0.8]) {
        const run = await runAndKill(BUILD, {}, { afterMs: Math.round(fullBuildMs * fraction), limitMs: 110_000 });
        if (run.killed) {
          killed++;
          expectLiveIndexIntact();
        } else {
          // The build won the race: then the new file is complete and verified, never partial.
          expect(run.exitCode).toBe(0);
          reference = { sha: sha(out), builtAt: IndexReader.open(out).meta.builtAt };
        }
      }
      expect(killed).toBeGreaterThanOrEqual(2);
    },
    240_000,
  );

  test(
    'while the temp file is being written: the live file is untouched, the leftover is never what a reload opens',
    async () => {
      // The write is short: retry until a kill lands while the temp file exists.
      let caught = false;
      for (let attempt = 0; attempt < 4 && !caught; attempt++) {
        for (const f of tempFiles()) rmSync(join(dir, f));
        const run = await runAndKill(BUILD, {}, { when: () => tempFiles().length > 0, limitMs: 110_000 });
        if (!run.killed) {
          expect(run.exitCode).toBe(0);
          reference = { sha: sha(out), builtAt: IndexReader.open(out).meta.builtAt };
          continue;
        }
        expectLiveIndexIntact();
        const left = tempFiles();
        if (left.length === 0) continue; // killed just before the temp file was created
        caught = true;
        // The leftover is a temp name (hidden, pid + time suffix): IPINTEL_INDEX never names it,
        // and a partial one is refused outright even if someone pointed a server at it.
        expect(left[0]).toMatch(/^\.ipintel\.idx\.tmp-\d+-\d+$/);
        try {
          IndexReader.open(join(dir, left[0]));
          // Killed after the last byte was written (before the rename): a complete file, still not live.
        } catch (e) {
          expect(e).toBeInstanceOf(IndexFileError);
        }
      }
      expect(caught).toBe(true);
    },
    240_000,
  );

  test(
    'SIGKILL of the `bun run build-index` wrapper alone leaves the builder running; it finishes a complete file',
    async () => {
      const before = reference.sha;
      const wrapper = Bun.spawn([process.execPath, 'run', 'build-index', '--manifest', manifest, '--out', out, '--quiet', '--no-defaults'], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' },
        stdout: 'ignore',
        stderr: 'ignore',
      });
      // Wait for the script runner to start the builder, then kill only the wrapper.
      let builders: number[] = [];
      for (let i = 0; i < 200 && builders.length === 0; i++) {
        await Bun.sleep(25);
        const children = `/proc/${wrapper.pid}/task/${wrapper.pid}/children`;
        builders = existsSync(children) ? readFileSync(children, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number) : [];
      }
      expect(builders.length).toBe(1);
      wrapper.kill('SIGKILL');
      await wrapper.exited;
      const builder = builders[0];
      // The orphaned builder is still there, and ends by itself with a complete file.
      expect(existsSync(`/proc/${builder}`)).toBe(true);
      for (let i = 0; i < 1200 && existsSync(`/proc/${builder}`); i++) await Bun.sleep(100);
      if (existsSync(`/proc/${builder}`)) process.kill(builder, 'SIGKILL'); // bound the test
      expect(existsSync(`/proc/${builder}`)).toBe(false);
      const after = IndexReader.open(out).meta.builtAt;
      expect(sha(out)).not.toBe(before);
      expect(Date.parse(after)).toBeGreaterThan(Date.parse(reference.builtAt));
      // A finished build leaves no temp file: neither its own nor those of the builds killed before it.
      expect(tempFiles()).toEqual([]);
    },
    180_000,
  );
});
