/**
 * The address texts of the lookup benchmarks (lookup.bench.ts,
 * lookup-stages.bench.ts): IPv4 uniform over the whole space; IPv6 90 %
 * inside intervals of the index that carry geolocation (a random interval, a
 * random address in it, so they hit data as real traffic does) and 10 %
 * uniform in 2000::/3. Generated before timing.
 */
import { Section } from '../../src/index/format.ts';
import { u32Section } from '../../src/index/map-index-file.ts';
import type { IndexReader } from '../../src/index/reader.ts';
import { formatIPv4, formatIPv6Groups } from '../../src/net/ip.ts';
import { xorshift32 } from './bench-kit.ts';

/** `count` IPv4 and `count` IPv6 address texts for `reader`'s index (same seed, same addresses every run). */
export function lookupAddresses(reader: IndexReader, count: number): { v4: string[]; v6: string[] } {
  const rand = xorshift32(0x1234567);
  const v4: string[] = [];
  for (let i = 0; i < count; i++) v4.push(formatIPv4(rand()));

  const v6Starts = u32Section(reader.file, Section.V6_STARTS);
  const v6Recs = u32Section(reader.file, Section.V6_RECORDS);
  const words = (i: number) =>
    (BigInt(v6Starts[4 * i]) << 96n) | (BigInt(v6Starts[4 * i + 1]) << 64n) | (BigInt(v6Starts[4 * i + 2]) << 32n) | BigInt(v6Starts[4 * i + 3]);
  const rand128 = () => (BigInt(rand()) << 96n) | (BigInt(rand()) << 64n) | (BigInt(rand()) << 32n) | BigInt(rand());
  const v6Text = (x: bigint) => {
    const g = new Array<number>(8);
    for (let k = 0; k < 8; k++) g[k] = Number((x >> BigInt(112 - 16 * k)) & 0xffffn);
    return formatIPv6Groups(g);
  };
  const v6: string[] = [];
  const GLOBAL_LO = 0x2n << 124n; // 2000::/3
  while (v6.length < count) {
    if (v6.length % 10 === 9) {
      v6.push(v6Text(GLOBAL_LO | (rand128() & ((1n << 125n) - 1n))));
      continue;
    }
    const i = rand() % v6Recs.length;
    if (v6Starts[4 * i] >>> 29 !== 1 || reader.record(v6Recs[i]).geo === null) continue;
    const start = words(i);
    const end = i + 1 < v6Recs.length ? words(i + 1) - 1n : (1n << 128n) - 1n;
    v6.push(v6Text(start + (rand128() % (end - start + 1n))));
  }
  return { v4, v6 };
}
