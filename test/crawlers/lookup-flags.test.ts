import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { verifiedCrawlerOf } from '../../src/crawlers/lookup-flags.ts';

const PROOF = { key: 'googlebot', hostname: 'crawl-66-249-66-1.googlebot.com', verifiedBy: 'reverse_forward_dns' as const };

test('the verified crawler of a lookup is the DNS proof only: its family key and hostname, nothing without one', () => {
  expect(verifiedCrawlerOf(PROOF)).toEqual({ key: 'googlebot', hostname: 'crawl-66-249-66-1.googlebot.com' });
  expect(verifiedCrawlerOf(null)).toBeNull();
});
