/**
 * `rir-delegated`: RIR statistics exchange format, plain (7 fields),
 * extended (8, opaque-id), NRO combined (9) and LACNIC's 7-field
 * `available` rows. ipv4/ipv6 rows become allocations; asn rows are not
 * address ranges and are passed over.
 */
import type { FeedParser } from '../feed/source.ts';
import type { AllocationValue } from '../sink.ts';
import { parseIPv4, parseIPv6, prefixRange, V4_MAX, type Addr, type Family } from '../../src/net/ip.ts';

/** One address row of a delegated file. */
export interface DelegatedRow {
  family: Family;
  start: Addr;
  end: Addr;
  value: AllocationValue;
}

/** `YYYYMMDD` as `YYYY-MM-DD`; undefined for empty or `00000000`; null when invalid. */
export function delegatedDate(text: string): string | undefined | null {
  if (text === '' || text === '00000000') return undefined;
  if (!/^\d{8}$/.test(text)) return null;
  const month = Number(text.slice(4, 6));
  const day = Number(text.slice(6, 8));
  if (month < 1 || month > 12 || day < 1 || day > 31) return null;
  return `${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6, 8)}`;
}

/** Parses the fields of an ipv4/ipv6 record row; a reason string when invalid. */
export function parseDelegatedRow(f: string[]): DelegatedRow | string {
  const [registryText, ccText, type, startText, valueText, dateText, statusText] = f;
  const registry = registryText.toLowerCase();
  if (registry === '') return 'empty registry';
  const status = statusText.toLowerCase();
  if (status === '') return 'empty status';
  const date = delegatedDate(dateText);
  if (date === null) return `bad date "${dateText}"`;
  const cc = ccText.toUpperCase();
  if (cc !== '' && !/^[A-Z]{2}$/.test(cc)) return `bad country code "${ccText}"`;
  if (!/^\d{1,10}$/.test(valueText)) return `bad value "${valueText}"`;
  const value = Number(valueText);
  let family: Family;
  let start: Addr;
  let end: Addr;
  if (type === 'ipv4') {
    const s = parseIPv4(startText);
    if (s < 0) return `bad IPv4 start "${startText}"`;
    // The value is an address count, not necessarily a power of two.
    if (value < 1 || s + value - 1 > V4_MAX) return `bad address count ${valueText}`;
    family = 4;
    start = s;
    end = s + value - 1;
  } else {
    const s = parseIPv6(startText);
    if (s === null) return `bad IPv6 start "${startText}"`;
    if (value > 128) return `bad prefix length ${valueText}`;
    family = 6;
    ({ start, end } = prefixRange(6, s, value));
  }
  const allocation: AllocationValue = { registry, status, blockStart: start, blockEnd: end };
  if (cc !== '' && cc !== 'ZZ') allocation.countryCode = cc;
  if (date !== undefined) allocation.date = date;
  return { family, start, end, value: allocation };
}

/** Reports every ipv4/ipv6 block with its registry, country, status and date. */
export const parse: FeedParser = async (ctx, sink) => {
  let sawVersion = false;
  let asOf = '';
  for await (const [line, n] of ctx.lines()) {
    if (line === '' || line.charCodeAt(0) === 35) continue; // # comments (also the APNIC mirror's trailer)
    const f = line.split('|');
    if (!sawVersion) {
      // The first data line must be the version line: `2|apnic|serial|records|start|end|offset`.
      if (f.length < 6 || !/^\d+(\.\d+)?$/.test(f[0])) ctx.fail('not RIR delegated statistics: expected a version line', n);
      // `version|registry|serial|records|startdate|enddate|UTCoffset`: enddate is the data's date (the serial may be epoch seconds).
      ctx.reportDate(/^\d{8}$/.test(f[5]) ? f[5] : f[2]);
      asOf = ctx.date.at;
      sawVersion = true;
      continue;
    }
    if (f.length >= 6 && f[1] === '*' && f[f.length - 1] === 'summary') continue;
    if (f.length < 7) {
      ctx.skip(n, `expected at least 7 |-separated fields, got ${f.length}`);
      continue;
    }
    const type = f[2];
    if (type === 'asn') continue; // ASN blocks are not address ranges
    if (type !== 'ipv4' && type !== 'ipv6') {
      ctx.skip(n, `unknown record type "${type}"`);
      continue;
    }
    const row = parseDelegatedRow(f);
    if (typeof row === 'string') {
      ctx.skip(n, row);
      continue;
    }
    // The file's date travels with each block: newer registry data outranks an older bogon list (merge/records.ts).
    row.value.asOf = asOf;
    sink.allocation(row.family, row.start, row.end, row.value);
    ctx.rows++;
  }
  if (!sawVersion) ctx.fail('not RIR delegated statistics: no version line');
};
