/**
 * Start/end address columns of range CSVs (ip-location-db): addresses as
 * text, or as decimal integers in the `-num` variants.
 */
import { parseIp, V4_MAX, V6_MAX, type Addr, type Family } from '../../src/net/ip.ts';

/** An inclusive range within one family. */
export interface AddrRange {
  family: Family;
  start: Addr;
  end: Addr;
}

const DIGITS = /^\d{1,39}$/;

/**
 * The family of integer-form addresses in a file: the manifest's `family`
 * option, else 6 when the file name says ipv6 (small IPv6 numbers such as
 * ::1 cannot be told apart from IPv4 by value), else null (decide by size).
 */
export function numericFamilyHint(path: string, option: unknown): Family | null {
  if (option === 4 || option === '4') return 4;
  if (option === 6 || option === '6') return 6;
  return /ipv6|v6/i.test(path.slice(path.lastIndexOf('/') + 1)) ? 6 : null;
}

function integerAddr(text: string, hint: Family | null): { family: Family; value: Addr } | null {
  if (!DIGITS.test(text)) return null;
  const big = BigInt(text);
  if (big > V6_MAX) return null;
  const family: Family = hint ?? (big > BigInt(V4_MAX) ? 6 : 4);
  if (family === 4) return big > BigInt(V4_MAX) ? null : { family, value: Number(big) };
  return { family, value: big };
}

/** Parses a start/end pair (text or integers); a reason string when invalid. */
export function parseRangeFields(startText: string, endText: string, hint: Family | null): AddrRange | string {
  const numeric = startText.length > 0 && startText.charCodeAt(0) >= 48 && startText.charCodeAt(0) <= 57 &&
    startText.indexOf('.') < 0 && startText.indexOf(':') < 0;
  const a = numeric ? integerAddr(startText, hint) : parseIp(startText);
  if (!a) return `bad start address "${startText}"`;
  const b = numeric ? integerAddr(endText, hint === null ? a.family : hint) : parseIp(endText);
  if (!b) return `bad end address "${endText}"`;
  if (a.family !== b.family) return 'start and end are of different families';
  if (a.value > b.value) return 'start address after end address';
  return { family: a.family, start: a.value, end: b.value };
}
