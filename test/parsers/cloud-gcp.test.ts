import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { FeedError } from '../../index-builder/feed/source.ts';
import { parse } from '../../index-builder/parsers/cloud-gcp.ts';
import { runParser, tempFeed, valueAt } from './feed-test-kit.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

describe('cloud-gcp', () => {
  testWithShared('real cloud.json: 1,092 prefixes with scope as region', async () => {
    const { rec, ctx } = await runParser(parse, 'cloud/google-cloud.json');
    expect(ctx.rows).toBe(1092);
    expect(ctx.skipped).toBe(0);
    expect(valueAt(rec, 'provider', '34.1.208.0/20')).toEqual({
      category: 'datacenter', provider: 'Google Cloud', service: 'Google Cloud', region: 'africa-south1',
    });
  });

  test('entries without a prefix are skipped; a wrong document is a FeedError', async () => {
    const doc = { prefixes: [{ scope: 'x' }, { ipv6Prefix: '2600:1900::/35', scope: 'us-east1' }] };
    const { rec, ctx } = await runParser(parse, tempFeed('gcp.json', JSON.stringify(doc)));
    expect(ctx.rows).toBe(1);
    expect(ctx.skipped).toBe(1);
    expect(valueAt(rec, 'provider', '2600:1900::/35')).toEqual({ category: 'datacenter', provider: 'Google Cloud', region: 'us-east1' });
    const err = await runParser(parse, tempFeed('gcp.json', '[]')).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
  });
});
