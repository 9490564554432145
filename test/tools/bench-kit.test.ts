/** The benchmark helpers: wrk's Lua script exists before wrk runs and is removed after; a process's CPU time from /proc. */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { existsSync, readFileSync } from 'node:fs';
import { cpuSeconds, treeCpuSeconds } from '../../tools/bench/bench-kit.ts';
import { withScriptFile } from '../../tools/bench/http-kit.ts';

test('the script is on disk, whole, while it is used, and gone after (also when the use throws)', () => {
  let seen = '';
  const path = withScriptFile('request = function() end\n', (p) => {
    seen = readFileSync(p, 'utf8');
    return p;
  });
  expect(seen).toBe('request = function() end\n');
  expect(existsSync(path)).toBe(false);
  let thrownPath = '';
  expect(() =>
    withScriptFile('x', (p) => {
      thrownPath = p;
      throw new Error('wrk failed');
    }),
  ).toThrow('wrk failed');
  expect(thrownPath).not.toBe('');
  expect(existsSync(thrownPath)).toBe(false);
});

test("cpuSeconds reads this process's CPU time and grows with work", () => {
  const before = cpuSeconds(process.pid);
  const usage = process.cpuUsage();
  expect(Math.abs(before - (usage.user + usage.system) / 1e6)).toBeLessThan(0.5);
  const end = performance.now() + 300;
  let x = 0;
  while (performance.now() < end) x += Math.sqrt(x + 1);
  expect(x).toBeGreaterThan(0);
  expect(cpuSeconds(process.pid)).toBeGreaterThan(before);
});

test("treeCpuSeconds counts a child process's CPU time with its parent's", async () => {
  // The child burns 0.3 s of CPU (its own count: on a loaded machine that takes longer than 0.3 s), then waits to be killed.
  const burn = 'let x = 0; const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; }; while (cpu() < 300000) x += Math.sqrt(x + 1); await Bun.sleep(120000);';
  const child = Bun.spawn([process.execPath, '-e', burn], { stdout: 'ignore', stderr: 'ignore' });
  try {
    for (let i = 0; i < 1000 && cpuSeconds(child.pid) < 0.2; i++) await Bun.sleep(50);
    const own = cpuSeconds(process.pid);
    const kid = cpuSeconds(child.pid);
    expect(kid).toBeGreaterThanOrEqual(0.2);
    expect(treeCpuSeconds(process.pid)).toBeGreaterThanOrEqual(own + kid);
  } finally {
    child.kill();
    await child.exited;
  }
}, 60_000);
