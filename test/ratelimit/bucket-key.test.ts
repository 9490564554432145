import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { bucketKeyFor, bucketKeyText, limiterKeyFor, UNKNOWN_IP_BUCKET } from '../../src/http/ratelimit/bucket-key.ts';
import type { Caller } from '../../src/http/caller.ts';

const anon = (ip: string | null): Caller => ({ ip, tier: 'anonymous', keyId: null, userId: null });

test('keyed calls use the key id, whatever the address', () => {
  const a = bucketKeyFor({ ip: '192.0.2.1', tier: 'free', keyId: 'k_123', userId: 'u1' });
  const b = bucketKeyFor({ ip: '2001:db8::1', tier: 'free', keyId: 'k_123', userId: 'u1' });
  expect(a).toBe('key:k_123');
  expect(b).toBe(a);
});

test('a key id that looks like an address never shares a bucket with that address', () => {
  expect(bucketKeyFor({ ip: null, tier: 'free', keyId: '192.0.2.1', userId: null })).not.toBe(bucketKeyFor(anon('192.0.2.1')));
});

test('IPv4 callers have one bucket per address', () => {
  expect(bucketKeyFor(anon('192.0.2.1'))).toBe('ip:192.0.2.1');
  expect(bucketKeyFor(anon('192.0.2.2'))).not.toBe(bucketKeyFor(anon('192.0.2.1')));
});

test('IPv6 callers share one bucket per /64, whatever the spelling', () => {
  const a = bucketKeyFor(anon('2001:db8:1:2::1'));
  expect(a).toBe('ip6:2001:db8:1:2::/64');
  expect(bucketKeyFor(anon('2001:db8:1:2:ffff:ffff:ffff:ffff'))).toBe(a);
  expect(bucketKeyFor(anon('2001:0DB8:0001:0002:0000:0000:0000:0042'))).toBe(a);
  expect(bucketKeyFor(anon('2001:db8:1:3::1'))).not.toBe(a);
  expect(bucketKeyFor(anon('fe80::1%eth0'))).toBe('ip6:fe80:0:0:0::/64');
});

test('IPv4-mapped IPv6 counts as the IPv4 address', () => {
  expect(bucketKeyFor(anon('::ffff:192.0.2.7'))).toBe('ip:192.0.2.7');
  expect(bucketKeyFor(anon('::ffff:c000:207'))).toBe('ip:192.0.2.7');
});

test('an unknown caller IP falls in one shared bucket', () => {
  expect(bucketKeyFor(anon(null))).toBe(UNKNOWN_IP_BUCKET);
  expect(bucketKeyFor(anon(''))).toBe(UNKNOWN_IP_BUCKET);
});

test('the limiter takes an IPv4 caller as a number, the same bucket as its text and its IPv4-mapped forms', () => {
  const v4 = limiterKeyFor(anon('192.0.2.7'));
  expect(typeof v4).toBe('number');
  expect(limiterKeyFor(anon('::ffff:192.0.2.7'))).toBe(v4);
  expect(limiterKeyFor(anon('::ffff:c000:207'))).toBe(v4);
  expect(limiterKeyFor(anon('192.0.2.8'))).not.toBe(v4);
  // Addresses past 2^31 stay distinct int32s.
  expect(limiterKeyFor(anon('255.255.255.255'))).toBe(-1);
  expect(limiterKeyFor(anon('128.0.0.0'))).not.toBe(limiterKeyFor(anon('0.0.0.0')));
});

test('every limiter key names the same bucket as its text form', () => {
  const callers: Caller[] = [
    anon('192.0.2.1'), anon('0.0.0.0'), anon('255.255.255.255'), anon('::ffff:10.1.2.3'), anon('2001:db8:1:2::1'), anon('fe80::1%eth0'), anon(null), anon('not-an-ip'),
    { ip: '192.0.2.1', tier: 'pro', keyId: 'k_9', userId: 'u' },
  ];
  for (const c of callers) expect(bucketKeyText(limiterKeyFor(c))).toBe(bucketKeyFor(c));
  expect(bucketKeyFor(anon('255.255.255.255'))).toBe('ip:255.255.255.255');
  expect(bucketKeyFor(anon('not-an-ip'))).toBe('ip:not-an-ip');
});
