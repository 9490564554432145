/** A server that cannot start says why in one line and exits 1, without a stack trace. */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

test('a corrupt index file: one clear line, exit 1', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipintel-start-'));
  try {
    const index = join(dir, 'bad.idx');
    writeFileSync(index, 'not an index at all, just some bytes that are long enough to pass the size check');
    const child = Bun.spawn(['bun', 'run', 'src/main.ts'], {
      cwd: resolve(import.meta.dir, '../..'),
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', IPINTEL_INDEX: index, IPINTEL_DB: join(dir, 'db.sqlite') },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
    clearTimeout(timer);
    expect(code).toBe(1);
    const lines = stderr.trim().split('\n').filter((l) => !l.startsWith('$ '));
    expect(lines).toEqual([`ipintel cannot start: index ${index}: wrong magic "not an i": not an ipintel index file`]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

test('a configuration word the server does not know: one clear line, exit 1 (not silently ignored)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipintel-start-'));
  try {
    for (const [name, value, line] of [
      ['IPINTEL_RATE_LIMITS', 'disabled', 'IPINTEL_RATE_LIMITS must be on/true/1/yes or off/false/0/no (got "disabled")'],
      ['IPINTEL_TRUST_PROXY_HEADER', 'x-real-ip', 'IPINTEL_TRUST_PROXY_HEADER must be x-forwarded-for or forwarded (got "x-real-ip")'],
    ]) {
      const child = Bun.spawn(['bun', 'run', 'src/main.ts'], {
        cwd: resolve(import.meta.dir, '../..'),
        env: { ...process.env, PORT: '0', HOST: '127.0.0.1', IPINTEL_INDEX: join(dir, 'none.idx'), IPINTEL_DB: join(dir, 'db.sqlite'), [name]: value },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
      clearTimeout(timer);
      expect(code).toBe(1);
      expect(stderr.trim().split('\n').filter((l) => !l.startsWith('$ '))).toEqual([`ipintel cannot start: ${line}`]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

test('`bun run src/main.ts --help` prints the usage and exits 0; an unknown argument is refused (neither starts serving)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipintel-start-'));
  try {
    for (const [args, wantCode, stream] of [
      [['--help'], 0, 'stdout'],
      [['-h'], 0, 'stdout'],
      [['--port', '9'], 2, 'stderr'],
    ] as const) {
      const child = Bun.spawn(['bun', 'run', 'src/main.ts', ...args], {
        cwd: resolve(import.meta.dir, '../..'),
        env: { ...process.env, PORT: '0', HOST: '127.0.0.1', IPINTEL_INDEX: join(dir, 'none.idx'), IPINTEL_DB: join(dir, 'db.sqlite'), IPINTEL_FEEDS_REFRESH: 'off' },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
      clearTimeout(timer);
      expect(code).toBe(wantCode);
      const text = stream === 'stdout' ? stdout : stderr;
      expect(text.split('\n').filter((l) => l.startsWith('usage: ipintel serve'))).toHaveLength(1);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
