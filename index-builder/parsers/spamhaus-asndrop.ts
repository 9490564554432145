/**
 * `spamhaus-asndrop`: ASN-DROP JSON lines
 * `{"asn":932,"rir":"arin","domain":"xn.net","cc":"US","asname":"XNNET"}`,
 * ending with a `{"type":"metadata",...}` line that is not a record.
 * `asn` may be a number or `AS<n>` text.
 */
import type { FeedParser } from '../feed/source.ts';
import type { AsnDropValue } from '../sink.ts';
import { parseAsn } from './asn-list.ts';
import { failIfEmpty, quoted } from './cidr-list.ts';
import { isObject, textOf } from './provider-formats/json-shape.ts';

/** Parses a `spamhaus-asndrop` source. */
export const parse: FeedParser = async (ctx, sink) => {
  for await (const [raw, lineNo] of ctx.lines()) {
    const line = raw.trim();
    if (line === '' || line.startsWith(';') || line.startsWith('#')) continue;
    let rec: unknown;
    try {
      rec = JSON.parse(line);
    } catch {
      ctx.skip(lineNo, 'invalid JSON line');
      continue;
    }
    if (!isObject(rec)) {
      ctx.skip(lineNo, 'JSON line is not an object');
      continue;
    }
    if (rec.type === 'metadata') {
      if (typeof rec.timestamp === 'number') ctx.reportDate(rec.timestamp);
      continue;
    }
    const asn = typeof rec.asn === 'number' || typeof rec.asn === 'string' ? parseAsn(String(rec.asn)) : null;
    if (asn === null) {
      ctx.skip(lineNo, `not an ASN: ${quoted(JSON.stringify(rec.asn) ?? 'missing')}`);
      continue;
    }
    const value: AsnDropValue = { asn };
    const asName = textOf(rec.asname);
    if (asName) value.asName = asName;
    const rir = textOf(rec.rir);
    if (rir) value.rir = rir.toLowerCase();
    const domain = textOf(rec.domain);
    if (domain) value.domain = domain;
    const cc = textOf(rec.cc)?.toUpperCase();
    if (cc && /^[A-Z]{2}$/.test(cc)) value.countryCode = cc;
    sink.asnDrop(value);
    ctx.rows++;
  }
  failIfEmpty(ctx, 'ASN records');
};
