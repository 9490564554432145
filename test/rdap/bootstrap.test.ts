/** The shipped bootstrap table: generated faithfully from IANA's files, and looked up most-specific-first. */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildBootstrapData, bootstrapKindOf, preferredBaseUrl } from '../../src/rdap/bootstrap-build.ts';
import { createBootstrap, shippedBootstrap } from '../../src/rdap/bootstrap.ts';
import { RDAP_FEEDS, readRdapFeed } from './rdap-feeds.ts';

const IANA_FILES = ['iana-bootstrap-ipv4.json', 'iana-bootstrap-ipv6.json', 'iana-bootstrap-asn.json'];
const SHIPPED = resolve(import.meta.dir, '../../src/rdap/bootstrap-data.json');

describe('building the table', () => {
  test('the shipped table is exactly what the IANA files give', () => {
    const built = buildBootstrapData(IANA_FILES.map(readRdapFeed));
    expect(built).toEqual(JSON.parse(readFileSync(SHIPPED, 'utf8')));
    expect(built.registries).toEqual({
      afrinic: 'https://rdap.afrinic.net/rdap/',
      apnic: 'https://rdap.apnic.net/',
      // IANA lists ARIN without a trailing slash; queries need one.
      arin: 'https://rdap.arin.net/registry/',
      lacnic: 'https://rdap.lacnic.net/rdap/',
      ripencc: 'https://rdap.db.ripe.net/',
    });
    expect(built.publication).toEqual({ ipv4: '2015-08-11T00:09:31Z', ipv6: '2016-03-22T15:40:01Z', asn: '2016-09-08T18:00:00Z' });
    expect(built.ipv4.afrinic).toEqual(['41.0.0.0/8', '102.0.0.0/8', '105.0.0.0/8', '154.0.0.0/8', '196.0.0.0/8', '197.0.0.0/8']);
    expect(built.ipv6.lacnic).toEqual(['2001:1200::/23', '2800::/12']);
    expect(Object.values(built.ipv4).flat()).toHaveLength(221);
  });

  test('kinds are told apart by their entries; DNS and non-bootstrap files are refused', () => {
    expect(IANA_FILES.map((f) => bootstrapKindOf(readRdapFeed(f)))).toEqual(['ipv4', 'ipv6', 'asn']);
    expect(() => buildBootstrapData([readRdapFeed('iana-bootstrap-dns.json')])).toThrow(/neither ipv4, ipv6 nor asn/);
    expect(() => buildBootstrapData([readRdapFeed('whoisit-rdap_response_ip_v4.json')])).toThrow(/services/);
    expect(() => buildBootstrapData([readRdapFeed(IANA_FILES[0]), readRdapFeed(IANA_FILES[0])])).toThrow(/two ipv4/);
  });

  test('a malformed prefix is refused', () => {
    const doc = { services: [[['300.0.0.0/8'], ['https://rdap.example/']]] };
    expect(() => buildBootstrapData([doc])).toThrow(/bad ipv4 prefix/);
  });

  test('https is preferred and a slash is added', () => {
    expect(preferredBaseUrl(['http://a.example/rdap', 'https://a.example/rdap'])).toBe('https://a.example/rdap/');
    expect(preferredBaseUrl(['http://a.example/'])).toBe('http://a.example/');
  });

  test('the refresh tool writes the same table, atomically, to --out', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rdap-bootstrap-'));
    try {
      const out = join(dir, 'bootstrap-data.json');
      const run = Bun.spawnSync(['bun', resolve(import.meta.dir, '../../tools/refresh-rdap-bootstrap.ts'), '--out', out, RDAP_FEEDS]);
      expect(run.exitCode).toBe(0);
      expect(readFileSync(out, 'utf8')).toBe(readFileSync(SHIPPED, 'utf8'));
      expect(readdirSync(dir)).toEqual(['bootstrap-data.json']); // no temp file left behind
      const bad = Bun.spawnSync(['bun', resolve(import.meta.dir, '../../tools/refresh-rdap-bootstrap.ts'), '--out', out, join(RDAP_FEEDS, 'iana-bootstrap-dns.json')]);
      expect(bad.exitCode).toBe(1);
      expect(readFileSync(out, 'utf8')).toBe(readFileSync(SHIPPED, 'utf8')); // a failed refresh keeps the old table
    } finally {
      rmSync(dir, { recursive: true });
    }
    expect(existsSync(dir)).toBe(false);
  });
});

describe('looking up the shipped table', () => {
  const cases: Array<[string, string]> = [
    ['74.125.225.229', 'arin'],
    ['2001:4860:4860::8888', 'arin'],
    ['62.239.237.1', 'ripencc'],
    ['2a00:2381:ffff::1', 'ripencc'],
    ['210.107.73.73', 'apnic'],
    ['2001:240:10c:1::ca20:9d1d', 'apnic'],
    ['200.57.141.161', 'lacnic'],
    ['2801:10:c000::', 'lacnic'],
    ['196.11.240.215', 'afrinic'],
    ['2001:43f8:7b0::', 'afrinic'],
    // Legacy space that RIPE now serves is still listed under ARIN, which redirects.
    ['130.59.31.80', 'arin'],
  ];
  for (const [ip, registry] of cases) {
    test(`${ip} -> ${registry}`, () => {
      const server = shippedBootstrap.serverForIp(ip);
      expect(server?.registry).toBe(registry);
      expect(server?.base).toBe(JSON.parse(readFileSync(SHIPPED, 'utf8')).registries[registry]);
    });
  }

  test('private, loopback, multicast and invalid addresses have no server', () => {
    for (const ip of ['10.1.2.3', '127.0.0.1', '224.0.0.1', '::1', 'fe80::1', 'not-an-ip', '1.2.3']) {
      expect(shippedBootstrap.serverForIp(ip)).toBeNull();
    }
  });

  test('AS numbers', () => {
    expect(shippedBootstrap.serverForAsn(16509)?.registry).toBe('arin');
    expect(shippedBootstrap.serverForAsn(3333)?.registry).toBe('ripencc');
    expect(shippedBootstrap.serverForAsn(4608)?.registry).toBe('apnic');
    expect(shippedBootstrap.serverForAsn(28000)?.registry).toBe('lacnic');
    expect(shippedBootstrap.serverForAsn(37100)?.registry).toBe('afrinic');
    expect(shippedBootstrap.serverForAsn(0)).toBeNull();
  });

  test('registryForUrl names the registry a URL belongs to, whatever the scheme', () => {
    expect(shippedBootstrap.registryForUrl('https://rdap.db.ripe.net/ip/62.239.237.1')).toBe('ripencc');
    expect(shippedBootstrap.registryForUrl('http://rdap.arin.net/registry/ip/1.2.3.4')).toBe('arin');
    expect(shippedBootstrap.registryForUrl('https://rdap.arin.net/other/ip/1.2.3.4')).toBeNull();
    expect(shippedBootstrap.registryForUrl('http://127.0.0.1:9/ip/1.2.3.4')).toBeNull();
  });
});

test('the most specific prefix wins, in either order', () => {
  const data = {
    generated_by: 'test',
    publication: { ipv4: null, ipv6: null, asn: null },
    registries: { wide: 'http://wide.example/', narrow: 'http://narrow.example/' },
    ipv4: { wide: ['198.0.0.0/8'], narrow: ['198.51.100.0/24'] },
    ipv6: { narrow: ['2001:db8::/32'], wide: ['2001::/16'] },
    asn: { wide: ['64496-64511'] },
  };
  const b = createBootstrap(data);
  expect(b.serverForIp('198.51.100.7')).toEqual({ registry: 'narrow', base: 'http://narrow.example/' });
  expect(b.serverForIp('198.51.101.7')).toEqual({ registry: 'wide', base: 'http://wide.example/' });
  expect(b.serverForIp('2001:db8::1')?.registry).toBe('narrow');
  expect(b.serverForIp('2001:db9::1')?.registry).toBe('wide');
  expect(b.serverForAsn(64500)?.registry).toBe('wide');
  expect(b.baseUrls().sort()).toEqual(['http://narrow.example/', 'http://wide.example/']);
});
