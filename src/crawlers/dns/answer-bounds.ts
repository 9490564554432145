/**
 * What a DNS answer may hold once read: verification uses a few PTR names
 * and the forward addresses of one of them, so a reply with thousands of
 * records (a reverse zone's owner controls its size) is cut to that before
 * it is cached. Pure.
 */

/** PTR names kept from one answer (a PTR set is normally one name). */
export const MAX_PTR_NAMES = 4;
/** Addresses kept from one A/AAAA answer. */
export const MAX_FORWARD_ADDRESSES = 32;
/** Largest reply read (bytes); no EDNS is offered, so a compliant server answers in 512 and sets TC beyond. */
export const MAX_REPLY_BYTES = 4096;
/** RFC 1035: a name is at most 253 characters written out, each label 1..63. */
const MAX_NAME_LENGTH = 253;
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** Whether normalized text (lower case, no root dot) is a host name: letters, digits, hyphens (underscores tolerated), labels of 1..63. */
export function isHostName(name: string): boolean {
  if (name.length === 0 || name.length > MAX_NAME_LENGTH) return false;
  for (const label of name.split('.')) if (!LABEL.test(label)) return false;
  return true;
}

/** Adds `value` to `values` unless present or `values` is full; false once full. */
export function keepBounded(values: string[], value: string, max: number): boolean {
  if (values.length >= max) return false;
  if (!values.includes(value)) values.push(value);
  return values.length < max;
}
