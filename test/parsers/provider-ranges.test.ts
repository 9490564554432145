import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { FeedError } from '../../index-builder/feed/source.ts';
import { parse } from '../../index-builder/parsers/provider-ranges.ts';
import { normalizeRegion } from '../../index-builder/parsers/provider-formats/vultr-geofeed.ts';
import { readGithubMeta } from '../../index-builder/parsers/provider-formats/github-meta.ts';
import { runParser, tempFeed, valueAt, valuesAt } from './feed-test-kit.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

describe('provider-ranges on real snapshots', () => {
  testWithShared('github-meta: sections map to categories, hooks first', async () => {
    const opts = { format: 'github-meta', category: 'webhook', provider: 'GitHub' };
    const { rec, ctx } = await runParser(parse, 'cloud/github-meta.json', opts);
    expect(ctx.skipped).toBe(0);
    // 192.30.252.0/22 is in hooks, web, api, git, ...: hooks wins.
    expect(valueAt(rec, 'provider', '192.30.252.0/22')).toEqual({ category: 'webhook', provider: 'GitHub', service: 'hooks' });
    expect(valueAt(rec, 'provider', '4.148.0.0/16')).toEqual({ category: 'datacenter', provider: 'GitHub', service: 'actions' });
    expect(valueAt(rec, 'provider', '2a0a:a440::/29')).toEqual({ category: 'webhook', provider: 'GitHub', service: 'hooks' });
    // ssh_keys / domains are not prefixes and are not reported.
    expect(rec.of('provider').length).toBe(ctx.rows);
    expect(ctx.rows).toBeGreaterThan(5314); // actions alone has 5,314 distinct entries
  });

  testWithShared('atlassian: email → messaging, ingress → content, egress → manifest category', async () => {
    const opts = { format: 'atlassian', category: 'webhook', provider: 'Atlassian' };
    const { rec, ctx } = await runParser(parse, 'cloud/atlassian-ip-ranges.json', opts);
    expect(ctx.rows).toBe(166);
    expect(valueAt(rec, 'provider', '52.82.172.0/22')).toEqual({ category: 'messaging', provider: 'Atlassian', service: 'email' });
    expect(valueAt(rec, 'provider', '104.192.138.0/24')).toEqual({ category: 'content', provider: 'Atlassian' });
    expect(valueAt(rec, 'provider', '34.218.156.209/32')).toEqual({
      category: 'webhook', provider: 'Atlassian', service: 'bitbucket', region: 'us-west-2',
    });
  });

  testWithShared('datadog: webhooks, synthetics with location, intake endpoints', async () => {
    const opts = { format: 'datadog', category: 'webhook', provider: 'Datadog' };
    const { rec, ctx } = await runParser(parse, 'cloud/datadog-ip-ranges.json', opts);
    expect(ctx.skipped).toBe(0);
    expect(valueAt(rec, 'provider', '3.90.129.171/32')).toEqual({ category: 'webhook', provider: 'Datadog', service: 'webhooks' });
    expect(valueAt(rec, 'provider', '3.1.36.99/32')).toEqual({
      category: 'datacenter', provider: 'Datadog', service: 'synthetics', region: 'aws:ap-southeast-1',
    });
    // Shared by agents, api, logs...: first section in the document.
    expect(valueAt(rec, 'provider', '3.233.144.0/20')).toEqual({ category: 'content', provider: 'Datadog', service: 'agents' });
  });

  testWithShared('zscaler: node name as region, cloud as service, svpn addresses', async () => {
    const opts = { format: 'zscaler', category: 'network_service_provider', provider: 'Zscaler' };
    const { rec, ctx } = await runParser(parse, 'cloud/zscaler-cenr.json', opts);
    expect(ctx.skipped).toBe(0);
    expect(valueAt(rec, 'provider', '2a03:eec0:3900::/40')).toEqual({
      category: 'network_service_provider', provider: 'Zscaler', service: 'zscaler.net', region: 'Abu Dhabi II',
    });
    expect(valueAt(rec, 'provider', '165.225.240.56/32')).toEqual({
      category: 'network_service_provider', provider: 'Zscaler', service: 'svpn',
    });
  });

  testWithShared('fastly, imperva, cdn77, google-goog: plain lists with the manifest category', async () => {
    const fastly = await runParser(parse, 'cloud/fastly-public-ip-list.json', { format: 'fastly', category: 'content', provider: 'Fastly' });
    expect(fastly.ctx.rows).toBe(21);
    expect(valueAt(fastly.rec, 'provider', '2a04:4e42::/32')).toEqual({ category: 'content', provider: 'Fastly' });
    const imperva = await runParser(parse, 'cloud/imperva-ip-ranges.json', { format: 'imperva', category: 'content', provider: 'Imperva' });
    expect(imperva.ctx.rows).toBe(12);
    expect(valueAt(imperva.rec, 'provider', '2a02:e980::/29')).toEqual({ category: 'content', provider: 'Imperva' });
    const cdn77 = await runParser(parse, 'cloud/cdn77-prefixes.json', { format: 'cdn77', category: 'content', provider: 'CDN77' });
    expect(cdn77.ctx.rows).toBe(36);
    expect(valueAt(cdn77.rec, 'provider', '89.222.125.0/26')).toEqual({ category: 'content', provider: 'CDN77' });
    const goog = await runParser(parse, 'cloud/google-goog.json', { format: 'google-goog', category: 'content', provider: 'Google' });
    expect(goog.ctx.rows).toBe(114);
    expect(valueAt(goog.rec, 'provider', '8.8.8.0/24')).toEqual({ category: 'content', provider: 'Google' });
  });

  testWithShared('vultr-geofeed: provider range plus location', async () => {
    const opts = { format: 'vultr-geofeed', category: 'datacenter', provider: 'Vultr' };
    const { rec, ctx } = await runParser(parse, 'cloud/vultr-geofeed.json', opts);
    expect(ctx.rows).toBe(513);
    expect(rec.of('geo')).toHaveLength(513);
    expect(valueAt(rec, 'provider', '8.3.29.0/24')).toEqual({ category: 'datacenter', provider: 'Vultr', region: 'US-CA' });
    expect(valueAt(rec, 'geo', '8.3.29.0/24')).toEqual({ countryCode: 'US', region: 'US-CA', city: 'Los Angeles', postalCode: '90012' });
    // Published as "US-US-MO".
    expect(valueAt(rec, 'geo', '2001:19f0:9800::/38')).toEqual({
      countryCode: 'US', region: 'US-MO', city: 'Maryland Heights', postalCode: '63043',
    });
  });
});

describe('provider-ranges input checks', () => {
  test('format and category options are required and validated', async () => {
    const path = tempFeed('f.json', '{"addresses":["10.0.0.0/8"],"ipv6_addresses":[]}');
    await expect(runParser(parse, path, { category: 'content' })).rejects.toThrow(/needs "format"/);
    await expect(runParser(parse, path, { format: 'akamai', category: 'content' })).rejects.toThrow(/unknown provider-ranges format "akamai"/);
    await expect(runParser(parse, path, { format: 'fastly' })).rejects.toThrow(/needs "category"/);
  });

  test('bad members are skipped with their JSON position; duplicates reported once', async () => {
    const doc = { addresses: ['10.0.0.0/8', 'x', 7, '10.0.0.0/8'], ipv6_addresses: ['2001:db8::/32'] };
    const { rec, ctx } = await runParser(parse, tempFeed('f.json', JSON.stringify(doc)), { format: 'fastly', category: 'content' });
    expect(ctx.rows).toBe(2);
    expect(ctx.skipSamples.map((s) => s.reason)).toEqual(['addresses[1]: not a CIDR: "x"', 'addresses[2]: not a CIDR: "7"']);
    expect(valuesAt(rec, 'provider', '10.0.0.0/8')).toHaveLength(1);
  });

  test('a threat category goes to the threat list named by the provider', async () => {
    const doc = { prefixes: [{ prefix: '198.51.100.0/24' }] };
    const { rec } = await runParser(parse, tempFeed('t.json', JSON.stringify(doc)), { format: 'cdn77', category: 'threat', provider: 'blocklist-x' });
    expect(valueAt(rec, 'threatList', '198.51.100.0/24')).toEqual({ list: 'blocklist-x' });
  });

  test('a document of the wrong shape is a FeedError naming the file', async () => {
    const path = tempFeed('wrong.json', '{"items":[]}');
    for (const format of ['github-meta', 'fastly', 'imperva', 'cdn77', 'google-goog', 'vultr-geofeed', 'datadog', 'zscaler']) {
      const err = await runParser(parse, path, { format, category: 'content' }).catch((e) => e);
      expect(err).toBeInstanceOf(FeedError);
      expect(err.message).toContain(path);
    }
    const err = await runParser(parse, path, { format: 'atlassian', category: 'content' }).catch((e) => e);
    expect(err.message).toContain('no prefixes found'); // right shape, nothing in it
    const imperva = tempFeed('imperva.json', '{"res":2,"res_message":"Invalid API id"}');
    await expect(runParser(parse, imperva, { format: 'imperva', category: 'content' })).rejects.toThrow(/API error document/);
  });

  test('github-meta: an unknown all-CIDR section takes the manifest category; key lists are ignored', () => {
    const entries = readGithubMeta({
      hooks: ['192.30.252.0/22'],
      new_service: ['203.0.113.0/24'],
      ssh_keys: ['ssh-ed25519 AAAAC3Nza'],
      domains: { website: ['*.github.com'] },
    });
    expect(entries).toEqual([
      { prefix: '192.30.252.0/22', where: 'hooks[0]', category: 'webhook', service: 'hooks' },
      { prefix: '203.0.113.0/24', where: 'new_service[0]', service: 'new_service' },
    ]);
  });

  test('normalizeRegion drops a doubled country prefix only', () => {
    expect(normalizeRegion('GB-GB-MAN', 'GB')).toBe('GB-MAN');
    expect(normalizeRegion('IL-Tel Aviv', 'IL')).toBe('IL-Tel Aviv');
    expect(normalizeRegion(undefined, 'US')).toBeUndefined();
  });
});
