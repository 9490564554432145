import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { FeedError } from '../../index-builder/feed/source.ts';
import { parse, readAzure } from '../../index-builder/parsers/cloud-azure.ts';
import { runParser, tempFeed, valueAt } from './feed-test-kit.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

describe('cloud-azure', () => {
  testWithShared('real ServiceTags (.json.gz): 56,725 distinct prefixes, merged tags', async () => {
    const { rec, ctx } = await runParser(parse, 'cloud/azure-ServiceTags_Public.json.gz');
    expect(ctx.rows).toBe(56725);
    expect(ctx.skipped).toBe(0);
    // Tags ActionGroup (global) + ActionGroup.SoutheastAsia.
    expect(valueAt(rec, 'provider', '4.145.74.52/30')).toEqual({
      category: 'datacenter', provider: 'Microsoft Azure', service: 'ActionGroup', region: 'southeastasia',
    });
    // Tags AzureArcInfrastructure(.CentralUS), AzureCloud.centralus, AzureCloud.
    expect(valueAt(rec, 'provider', '2603:1030:13:200::/62')).toEqual({
      category: 'datacenter', provider: 'Microsoft Azure', service: 'AzureArcInfrastructure', region: 'centralus',
    });
    // Only AzureFrontDoor.Frontend (no systemService): CDN edge.
    expect(valueAt(rec, 'provider', '4.145.22.160/29')).toEqual({
      category: 'content', provider: 'Microsoft Azure', service: 'AzureFrontDoor.Frontend',
    });
  });

  test('AzureCloud alone gives a region but no service', () => {
    const entries = readAzure({
      values: [
        { name: 'AzureCloud.westus', properties: { region: 'westus', systemService: '', addressPrefixes: ['192.0.2.0/24'] } },
        { name: 'AzureCloud', properties: { region: '', systemService: '', addressPrefixes: ['192.0.2.0/24'] } },
      ],
    });
    expect(entries).toEqual([
      { prefix: '192.0.2.0/24', where: 'values[0].properties.addressPrefixes[0]', service: undefined, region: 'westus', category: 'datacenter', geo: { countryCode: 'US', region: 'California' } },
    ]);
  });

  test('a document without values is a FeedError', async () => {
    const path = tempFeed('azure.json', '{"changeNumber":1}');
    const err = await runParser(parse, path).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toContain('"values"');
  });
});
