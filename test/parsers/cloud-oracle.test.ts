import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { FeedError } from '../../index-builder/feed/source.ts';
import { oracleService, parse } from '../../index-builder/parsers/cloud-oracle.ts';
import { runParser, tempFeed, valueAt } from './feed-test-kit.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

describe('cloud-oracle', () => {
  testWithShared('real public_ip_ranges.json: 1,102 CIDRs over 56 regions', async () => {
    const { rec, ctx } = await runParser(parse, 'cloud/oracle-public_ip_ranges.json');
    expect(ctx.rows).toBe(1102);
    expect(ctx.skipped).toBe(0);
    expect(valueAt(rec, 'provider', '40.233.0.0/19')).toEqual({
      category: 'datacenter', provider: 'Oracle Cloud', service: 'OCI', region: 'mx-monterrey-1',
    });
    expect(valueAt(rec, 'provider', '134.70.200.0/23')).toEqual({
      category: 'datacenter', provider: 'Oracle Cloud', service: 'OBJECT_STORAGE', region: 'mx-monterrey-1',
    });
  });

  test('most specific tag wins; unknown tags count as specific', () => {
    expect(oracleService(['OSN', 'OBJECT_STORAGE'])).toBe('OBJECT_STORAGE');
    expect(oracleService(['OCI', 'NEW_THING'])).toBe('NEW_THING');
    expect(oracleService([])).toBeUndefined();
  });

  test('a document without regions is a FeedError', async () => {
    const err = await runParser(parse, tempFeed('oci.json', '{"last_updated_timestamp":"x"}')).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toContain('"regions"');
  });
});
