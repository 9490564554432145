import { describe, expect, test } from 'bun:test';
import { lookupCrawlerFlags } from '../../src/crawlers/lookup-flags.ts';
import { makeHit } from './hits.ts';

const PROOF = { key: 'googlebot', hostname: 'crawl-66-249-66-1.googlebot.com', verifiedBy: 'reverse_forward_dns' as const };

describe('lookup crawler flags', () => {
  test('known comes from the range only; verified from the DNS proof only', () => {
    expect(lookupCrawlerFlags(makeHit('66.249.66.1', { crawler: 'googlebot' }), null)).toEqual({
      isKnownCrawler: true,
      isVerifiedCrawler: false,
      family: expect.objectContaining({ key: 'googlebot' }),
      verifiedCrawler: null,
    });
    const both = lookupCrawlerFlags(makeHit('66.249.66.1', { crawler: 'googlebot' }), PROOF);
    expect(both.isVerifiedCrawler).toBe(true);
    expect(both.verifiedCrawler).toEqual({ key: 'googlebot', hostname: 'crawl-66-249-66-1.googlebot.com' });
  });

  test('a proof outside the ranges verifies without making the address "known"', () => {
    const flags = lookupCrawlerFlags(makeHit('66.249.66.1'), PROOF);
    expect(flags.isKnownCrawler).toBe(false);
    expect(flags.isVerifiedCrawler).toBe(true);
    expect(flags.family?.provider).toBe('Google');
  });

  test('no hit and no proof is nothing', () => {
    expect(lookupCrawlerFlags(null, null)).toEqual({ isKnownCrawler: false, isVerifiedCrawler: false, family: null, verifiedCrawler: null });
  });
});
