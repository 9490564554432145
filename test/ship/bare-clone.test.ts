/**
 * A clone is complete: the repository's files copied to a temp folder with
 * no real feed snapshots beside it (node_modules linked from this checkout,
 * as `bun install` with the lockfile would lay it out). A few test files that
 * read the snapshots run there: their snapshot tests report themselves
 * skipped with one line saying why and the rest pass; with CI=true the
 * missing snapshots fail them. Bounded: three small test files, not the suite.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dir, '../..');
/** Test files with tests on the real snapshots and tests on fixtures. */
const FILES = ['test/parsers/bogons.test.ts', 'test/parsers/tor-exits.test.ts', 'test/config/config.test.ts'];
/** Not part of a clone: installed, built or generated here. */
const NOT_IN_CLONE = new Set(['node_modules', '.git', 'data', 'dist']);

let parent: string;
let clone: string;

/** The repository's files: what git tracks (and new files not ignored) when this is a git checkout, else the tree. */
function repositoryFiles(): string[] {
  const git = existsSync(join(ROOT, '.git')) ? Bun.spawnSync(['git', 'ls-files', '-co', '--exclude-standard'], { cwd: ROOT }) : null;
  if (git?.exitCode === 0) return git.stdout.toString().split('\n').filter((f) => f && existsSync(join(ROOT, f)));
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(join(ROOT, rel), { withFileTypes: true })) {
      if (rel === '' && NOT_IN_CLONE.has(e.name)) continue;
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p);
      else out.push(p);
    }
  };
  walk('');
  return out;
}

beforeAll(() => {
  parent = mkdtempSync(join(tmpdir(), 'ipintel-bare-'));
  clone = join(parent, 'ipintel');
  for (const f of repositoryFiles()) {
    mkdirSync(dirname(join(clone, f)), { recursive: true });
    cpSync(join(ROOT, f), join(clone, f));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
});
afterAll(() => rmSync(parent, { recursive: true, force: true }));

/** `bun test FILES` in the clone; CI set as given (and never inherited). */
function runInClone(ci: boolean) {
  const env: Record<string, string | undefined> = { ...process.env };
  delete env.CI;
  if (ci) env.CI = 'true';
  const r = Bun.spawnSync([process.execPath, 'test', ...FILES], { cwd: clone, env, stdout: 'pipe', stderr: 'pipe', timeout: 120_000 });
  return { code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() };
}

test('the clone has no real snapshots beside it', () => {
  expect(existsSync(join(parent, 'shared'))).toBe(false);
  expect(existsSync(join(clone, 'package.json'))).toBe(true);
  expect(existsSync(join(clone, 'test/fixtures/feeds/tor/exit-addresses'))).toBe(true);
});

test('without CI: the snapshot tests are skipped, one line per file says why, the rest pass', () => {
  const { code, out } = runInClone(false);
  expect(out).toMatch(/ 0 fail/);
  expect(code).toBe(0);
  for (const f of ['test/parsers/bogons.test.ts', 'test/parsers/tor-exits.test.ts']) {
    const lines = out.split('\n').filter((l) => l.startsWith(`skipped: tests of ${f} that read the real feed snapshots`));
    expect(lines.length).toBe(1);
    expect(lines[0]).toContain('is absent (CI=true makes this a failure)');
  }
  expect(out).toContain('(skip) bogons > Team Cymru fullbogons IPv4');
  expect(out).toContain('(pass) bogons > bad lines are skipped by number');
  // The config test's feeds.json case runs on the fixture feeds in the repository.
  expect(out).toContain('(pass) the default build reads IPINTEL_FEEDS_DIR/feeds.json when present > with feeds.json');
  expect(Number(/ (\d+) skip/.exec(out)?.[1])).toBeGreaterThanOrEqual(4);
}, 150_000);

test('with CI=true: the missing snapshots are failures', () => {
  const { code, out } = runInClone(true);
  expect(code).not.toBe(0);
  expect(out).toContain('CI=true and the real feed snapshots are missing');
  expect(out).toContain('(fail) bogons > Team Cymru fullbogons IPv4');
  expect(out).toContain('(pass) bogons > bad lines are skipped by number');
}, 150_000);
