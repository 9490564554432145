/**
 * The crawler verifier's DNS client loaded on its first question
 * (src/crawlers/dns/lazy-transport.ts): nothing loads at creation, one load
 * serves every later question, and a load that fails is that question's
 * DnsFailure and is tried again.
 */
import { expect, test } from 'bun:test';
import { lazyTransport } from '../../src/crawlers/dns/lazy-transport.ts';
import { DnsFailure, type DnsAnswer, type DnsTransport } from '../../src/crawlers/dns/types.ts';

const answer: DnsAnswer = { kind: 'records', values: ['crawl.example.com'], ttl: 60 };
const real: DnsTransport = { query: async () => answer };

test('the client loads on the first question only, once for concurrent and later ones', async () => {
  let loads = 0;
  const transport = lazyTransport(async () => {
    loads++;
    return real;
  });
  expect(loads).toBe(0);
  const [a, b] = await Promise.all([transport.query('1.0.0.127.in-addr.arpa', 'PTR'), transport.query('crawl.example.com', 'A')]);
  expect([a, b]).toEqual([answer, answer]);
  await transport.query('crawl.example.com', 'AAAA');
  expect(loads).toBe(1);
});

test('a failed load is the question\'s DnsFailure (network), and the next question loads again', async () => {
  let loads = 0;
  const transport = lazyTransport(async () => {
    if (++loads === 1) throw new Error('EMFILE: too many open files');
    return real;
  });
  const failed = await transport.query('crawl.example.com', 'A').catch((e: unknown) => e);
  expect(failed).toBeInstanceOf(DnsFailure);
  expect((failed as DnsFailure).reason).toBe('network');
  expect((failed as DnsFailure).message).toContain('EMFILE');
  expect(await transport.query('crawl.example.com', 'A')).toEqual(answer);
  expect(loads).toBe(2);
});
