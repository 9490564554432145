/**
 * Publisher-first precedence (index-builder/merge/precedence.ts): the rules
 * one by one, then small builds from real snapshot files in which two sources
 * claim the same range.
 */
import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import type { ResolvedSource } from '../../index-builder/manifest.ts';
import { AggregatedClaim, dayOf, publisherGeoStands, resolveFlags, resolveProvider, spanOf, standingOf } from '../../index-builder/merge/precedence.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { Flag } from '../../src/index/record.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';

describe('standing of a source', () => {
  test.each([
    [{ type: 'cloud-azure', path: 'x' }, 'infrastructure'],
    [{ type: 'cloud-aws', path: 'x' }, 'infrastructure'],
    [{ type: 'geofeed', category: 'datacenter', provider: 'DigitalOcean', path: 'x' }, 'infrastructure'],
    [{ type: 'provider-ranges', format: 'vultr-geofeed', provider: 'Vultr', category: 'datacenter', path: 'x' }, 'infrastructure'],
    [{ type: 'provider-ranges', format: 'github-meta', provider: 'GitHub', category: 'webhook', path: 'x' }, 'service'],
    [{ type: 'cidr-list', category: 'privacy_relay', provider: 'iCloud Private Relay', path: 'x' }, 'service'],
    [{ type: 'icloud-relay', path: 'x' }, 'service'],
    [{ type: 'cidr-list', category: 'vpn', path: 'x' }, 'aggregated'],
    [{ type: 'cidr-list', category: 'vpn', provider: '  ', path: 'x' }, 'aggregated'],
    [{ type: 'asn-list', category: 'vpn', path: 'x' }, 'aggregated'],
    [{ type: 'geofeed', category: 'datacenter', path: 'x' }, 'aggregated'],
  ] as const)('%j is %s', (source, standing) => {
    expect(standingOf(source)).toBe(standing);
  });

  test('dates: YYYY-MM-DD in days, anything else undated (0)', () => {
    expect(dayOf('2025-01-02')).toBe(dayOf('2025-01-01') + 1);
    expect(dayOf('2025-1-2')).toBe(0);
    expect(dayOf(undefined)).toBe(0);
    expect(dayOf(20250101)).toBe(0);
  });

  test('span: log2 of the range size, IPv4 and IPv6', () => {
    expect(spanOf(0, 0)).toBe(0);
    expect(spanOf(0x0a000000, 0x0a0000ff)).toBe(8);
    expect(spanOf(0, 0xffffffff)).toBe(32);
    expect(spanOf(0n, (1n << 64n) - 1n)).toBe(64);
    expect(spanOf(0n, (1n << 128n) - 1n)).toBe(128);
  });
});

describe('publisherGeoStands', () => {
  const tokyo = { countryCode: 'JP', region: 'Tôkyô', city: 'Tokyo' };
  test('a publisher naming the city always stands; so does any publisher without a database answer', () => {
    expect(publisherGeoStands(tokyo, { countryCode: 'JP', region: 'Tokyo', city: 'Shibuya City' })).toBe(true);
    expect(publisherGeoStands({ countryCode: 'IE' }, undefined)).toBe(true);
  });
  test("a cityless publisher yields to a database answer inside its country and subdivision (names compared without diacritics or case)", () => {
    expect(publisherGeoStands({ countryCode: 'IE' }, { countryCode: 'IE', city: 'Dublin' })).toBe(false);
    expect(publisherGeoStands({ countryCode: 'JP', region: 'Tôkyô' }, { countryCode: 'JP', region: 'TOKYO', city: 'Shibuya City' })).toBe(false);
    expect(publisherGeoStands({ countryCode: 'US', region: 'Virginia' }, { countryCode: 'US', region: 'New York', city: 'New York' })).toBe(true);
    expect(publisherGeoStands({ countryCode: 'US', region: 'Virginia' }, { countryCode: 'US', city: 'Somewhere' })).toBe(true);
    expect(publisherGeoStands({ countryCode: 'BR' }, { countryCode: 'US', city: 'Ashburn' })).toBe(true);
  });
});

describe('resolveFlags', () => {
  test("an aggregated VPN or hosting claim yields to a publisher's relay claim (and the ASN-level lists with it)", () => {
    expect(resolveFlags(AggregatedClaim.VPN | AggregatedClaim.DATACENTER | Flag.PRIVACY_RELAY | Flag.VPN_ASN | Flag.DATACENTER_ASN)).toBe(Flag.PRIVACY_RELAY);
  });
  test("a cloud's own hosting claim on relay egress stands (the cloud published it); a publisher's VPN claim survives another publisher's relay claim", () => {
    expect(resolveFlags(Flag.DATACENTER | Flag.PRIVACY_RELAY)).toBe(Flag.DATACENTER | Flag.PRIVACY_RELAY);
    expect(resolveFlags(Flag.VPN | AggregatedClaim.VPN | Flag.PRIVACY_RELAY)).toBe(Flag.VPN | Flag.PRIVACY_RELAY);
  });
  test("an aggregated hosting claim (range or ASN) yields to a publisher's content or network-service edge; a cloud's own hosting claim stands", () => {
    expect(resolveFlags(AggregatedClaim.DATACENTER | Flag.DATACENTER_ASN | Flag.CONTENT)).toBe(Flag.CONTENT);
    expect(resolveFlags(AggregatedClaim.DATACENTER | Flag.NETWORK_SERVICE_PROVIDER)).toBe(Flag.NETWORK_SERVICE_PROVIDER);
    expect(resolveFlags(Flag.DATACENTER | Flag.CONTENT)).toBe(Flag.DATACENTER | Flag.CONTENT);
    expect(resolveFlags(AggregatedClaim.DATACENTER | Flag.WEBHOOK)).toBe(Flag.DATACENTER | Flag.WEBHOOK);
  });
  test('an aggregated relay claim yields to a publisher\'s VPN claim; the ASN-level VPN list agrees with it', () => {
    expect(resolveFlags(AggregatedClaim.PRIVACY_RELAY | Flag.VPN | Flag.VPN_ASN)).toBe(Flag.VPN | Flag.VPN_ASN);
  });
  test('an aggregated proxy or VPN claim yields to an official crawler range', () => {
    expect(resolveFlags(AggregatedClaim.PROXY | AggregatedClaim.VPN | Flag.CRAWLER_RANGE)).toBe(Flag.CRAWLER_RANGE);
  });
  test('without a publisher claim, aggregated claims stand; a publisher claim of the same kind agrees', () => {
    expect(resolveFlags(AggregatedClaim.VPN | AggregatedClaim.PRIVACY_RELAY)).toBe(Flag.VPN | Flag.PRIVACY_RELAY);
    expect(resolveFlags(AggregatedClaim.VPN | Flag.VPN)).toBe(Flag.VPN);
    expect(resolveFlags(AggregatedClaim.PROXY | AggregatedClaim.DATACENTER | Flag.VPN_ASN)).toBe(Flag.PROXY | Flag.DATACENTER | Flag.VPN_ASN);
    expect(resolveFlags(AggregatedClaim.DATACENTER | Flag.CRAWLER_RANGE)).toBe(Flag.DATACENTER | Flag.CRAWLER_RANGE);
  });
  test('build-only bits never reach a record', () => {
    for (let claims = 0; claims < 1 << 19; claims += 997) {
      expect(resolveFlags(claims | AggregatedClaim.DATACENTER | AggregatedClaim.VPN | AggregatedClaim.PROXY | AggregatedClaim.PRIVACY_RELAY) >>> 19).toBe(0);
    }
  });
});

describe('resolveProvider', () => {
  const azure = { category: 'datacenter' as const, provider: 'Microsoft Azure', region: 'eastus', span: 12 };
  const actions = { category: 'datacenter' as const, provider: 'GitHub', service: 'actions', span: 12 };
  test('the cloud holding the space is the operator; the tenant shows as the service where the cloud names none', () => {
    expect(resolveProvider(azure, actions, undefined)).toEqual({ name: 'Microsoft Azure', category: 'datacenter', service: 'GitHub actions', region: 'eastus' });
    expect(resolveProvider({ ...azure, service: 'AzureFrontDoor.Frontend' }, actions, undefined)?.service).toBe('AzureFrontDoor.Frontend');
  });
  test("the more specific claim names the service: a tenant's /32 inside the cloud's /16, the cloud's /24 inside a tenant's /20", () => {
    const aws = { category: 'datacenter' as const, provider: 'Amazon Web Services', service: 'AMAZON', region: 'us-east-1', span: 16 };
    const hooks = { category: 'webhook' as const, provider: 'Atlassian', service: 'bitbucket', span: 0 };
    expect(resolveProvider(aws, hooks, undefined)).toEqual({ name: 'Amazon Web Services', category: 'datacenter', service: 'Atlassian bitbucket', region: 'us-east-1' });
    const frontDoor = { ...azure, service: 'AzureFrontDoor.Frontend', span: 8 };
    expect(resolveProvider(frontDoor, actions, undefined)?.service).toBe('AzureFrontDoor.Frontend');
  });
  test("a crawler range's owner (registry) is the operator, the crawler its service", () => {
    expect(resolveProvider(azure, actions, 'bingbot')).toEqual({ name: 'Microsoft', category: 'datacenter', service: 'bingbot', region: 'eastus' });
    expect(resolveProvider(undefined, undefined, 'gptbot')).toEqual({ name: 'OpenAI', category: 'crawler', service: 'gptbot' });
    // A key the registry does not know names no owner.
    expect(resolveProvider(undefined, undefined, 'no-such-bot')).toBeUndefined();
  });
  test("a publisher's own VPN or relay service is the operator even inside a cloud or a crawler range (its use ranks first)", () => {
    expect(resolveProvider(azure, { category: 'vpn', provider: 'Mullvad', span: 0 }, undefined)).toEqual({ name: 'Mullvad', category: 'vpn' });
    expect(resolveProvider(azure, { category: 'privacy_relay', provider: 'iCloud Private Relay', region: 'US-CA', span: 6 }, 'bingbot')).toEqual({
      name: 'iCloud Private Relay',
      category: 'privacy_relay',
      region: 'US-CA',
    });
  });
  test('a service outside any cloud is its own operator', () => {
    expect(resolveProvider(undefined, actions, undefined)).toEqual({ name: 'GitHub', category: 'datacenter', service: 'actions' });
  });
});

const dir = mkdtempSync(join(tmpdir(), 'ipintel-precedence-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Builds an index from real snapshot files (manifest options as given) and opens it. */
async function buildFrom(name: string, entries: Array<Record<string, string>>): Promise<IndexReader> {
  const sources: ResolvedSource[] = entries.map((o) => ({ options: { ...o, type: o.type, path: o.path }, absPath: resolve(FIXTURE_FEEDS_DIR, o.path), displayPath: o.path }));
  const out = join(dir, `${name}.idx`);
  await buildIndex({ sources, out, quiet: true });
  return IndexReader.open(out);
}

describe('two real lists claiming the same ranges', () => {
  const MULLVAD = 'vpn/x4bnet-input-mullvadvpn-ips.txt';
  // 23.234.68.2 is on the Mullvad list.
  const ADDRESS = '23.234.68.2';

  test('among equal claims the fresher source names the operator, whatever the manifest order', async () => {
    const reader = await buildFrom('fresher', [
      { type: 'cidr-list', category: 'vpn', provider: 'Mullvad (2025 list)', date: '2025-06-01', path: MULLVAD },
      { type: 'cidr-list', category: 'vpn', provider: 'Mullvad (2021 list)', date: '2021-06-01', path: MULLVAD },
    ]);
    expect(reader.lookup(ADDRESS)!.record.provider?.name).toBe('Mullvad (2025 list)');
  }, 60_000);

  test("the date a file states ranks it, not the manifest order (two AWS documents naming one prefix)", async () => {
    const aws = (name: string, createDate: string, service: string) => {
      const path = join(dir, name);
      writeFileSync(path, JSON.stringify({ syncToken: '1', createDate, prefixes: [{ ip_prefix: '198.51.100.0/24', region: 'us-east-1', service, network_border_group: 'us-east-1' }], ipv6_prefixes: [] }));
      return path;
    };
    // The newer document comes first: by manifest order alone the older one's service would win.
    const reader = await buildFrom('file-dates', [
      { type: 'cloud-aws', path: aws('aws-new.json', '2026-08-21-07-37-05', 'S3') },
      { type: 'cloud-aws', path: aws('aws-old.json', '2020-01-01-00-00-00', 'ROUTE53') },
    ]);
    expect(reader.lookup('198.51.100.7')!.record.provider?.service).toBe('S3');
  }, 60_000);

  test('undated equal claims: the later manifest entry wins, as before', async () => {
    const reader = await buildFrom('undated', [
      { type: 'cidr-list', category: 'vpn', provider: 'first', path: MULLVAD },
      { type: 'cidr-list', category: 'vpn', provider: 'second', path: MULLVAD },
    ]);
    expect(reader.lookup(ADDRESS)!.record.provider?.name).toBe('second');
  }, 60_000);

  test("a publisher's relay list over the same file read as an aggregated VPN list: relay, not VPN", async () => {
    const RELAY = 'relay/derived-x4bnet-apple-private-relay-ips.txt';
    const reader = await buildFrom('relay-over-vpn', [
      { type: 'cidr-list', category: 'vpn', path: RELAY },
      { type: 'cidr-list', category: 'privacy_relay', provider: 'iCloud Private Relay', path: RELAY },
    ]);
    const r = reader.lookup('104.28.28.1')!.record;
    expect(r.flags & Flag.PRIVACY_RELAY).toBeTruthy();
    expect(r.flags & (Flag.VPN | Flag.VPN_ASN)).toBe(0);
    expect(r.provider?.name).toBe('iCloud Private Relay');
  }, 60_000);
});
