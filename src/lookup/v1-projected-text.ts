/**
 * A `fields` projection cut from the whole v1 body's text instead of built
 * and serialized again: the whole body is memoised (v1-body.ts), a fresh
 * projection decodes the record and scores it. The cut is exact because the
 * contract (src/contract/v1.ts) declares every nested object closed
 * (`additionalProperties: false`) and no nested property shares a name with a
 * top-level field (test/lookup/v1-projected-text.test.ts checks both): in
 * JSON.stringify's output a quote right after a comma is never inside a
 * string, so `,"network":` can only be the top-level member.
 */
import { V1_FIELDS } from './v1.ts';

/** Each top-level field's member marker, in the body's order (`ip` opens the object, so it has none). */
const MARKERS: readonly string[] = V1_FIELDS.map((f) => `,"${f}":`);

/**
 * The members of `whole` (JSON.stringify of a whole v1 object, every field
 * present, in V1_FIELDS order) named in `fields`, as JSON.stringify writes
 * the object holding only those.
 */
export function projectV1Text(whole: string, fields: ReadonlySet<string>): string {
  const out = cutMembers(whole, fields, fields.size, 0, V1_FIELDS.length, 0, whole.length - 1, '{');
  if (out.count !== fields.size) throw new Error('projectV1Text: a requested field is not in the body');
  return out.text + '}';
}

/**
 * The field set a mask was last made of, and that mask: a projection's set is
 * one object per query (the projection memo). Module-global yet safe: each
 * thread has its own module, and a projection's set is never changed after
 * it is parsed, so the same object always has the same mask.
 */
let maskedFields: ReadonlySet<string> | null = null;
let lastMask = 0;

/** Bit i set when `fields` names V1_FIELDS[i]. */
export function fieldMask(fields: ReadonlySet<string>): number {
  if (fields === maskedFields) return lastMask;
  let mask = 0;
  for (let i = 0; i < V1_FIELDS.length; i++) if (fields.has(V1_FIELDS[i])) mask |= 1 << i;
  maskedFields = fields;
  lastMask = mask;
  return mask;
}

/** How many fields come before the scored part (`ip` … `routing`). */
const LEAD_COUNT = V1_FIELDS.indexOf('score');
/** Where the record's own part starts: after `ip` and `stack`. */
const OWN_FIRST = V1_FIELDS.indexOf('location');

/** The fields before the scored part (V1BodyCache.bodyParts): a projection of these alone needs no scored text. */
export const LEAD_FIELDS: ReadonlySet<string> = new Set(V1_FIELDS.slice(0, LEAD_COUNT));

/** Whether every field of `fields` comes before the scored part. */
export function isLeadOnly(fields: ReadonlySet<string>): boolean {
  return fieldMask(fields) >>> LEAD_COUNT === 0;
}

/** Bits of V1_FIELDS' `ip` and `stack`. */
const IP_BIT = 1 << V1_FIELDS.indexOf('ip');
const STACK_BIT = 1 << V1_FIELDS.indexOf('stack');

/**
 * projectV1Text for `fields` all among LEAD_FIELDS, written from the address
 * text, its stack (`ipv4`/`ipv6`) and the record's `own` part as the memo
 * holds it (`"location":…,"routing":{…}`, v1-body.ts): `ip` and `stack` as
 * the body's prefix writes them (a canonical address needs no escaping), and
 * the wanted members of `own` as one slice when they are adjacent (two for
 * location with routing), found by at most two marker searches. The scored
 * part (most of the body) is never read.
 */
export function projectV1Lead(ip: string, stack: string, own: string, fields: ReadonlySet<string>): string {
  const mask = fieldMask(fields);
  if (mask >>> LEAD_COUNT !== 0 || bitCount(mask) !== fields.size) throw new Error('projectV1Text: a requested field is not among the lead fields');
  let out = mask & IP_BIT ? `{"ip":"${ip}"` : '{';
  if (mask & STACK_BIT) out += out.length === 1 ? `"stack":"${stack}"` : `,"stack":"${stack}"`;
  // Own fields OWN_FIRST..LEAD_COUNT-1 wanted: each run of adjacent ones is one slice.
  for (let i = OWN_FIRST; i < LEAD_COUNT; i++) {
    if (!((mask >>> i) & 1)) continue;
    let last = i;
    while (last + 1 < LEAD_COUNT && (mask >>> (last + 1)) & 1) last++;
    const starts = i === OWN_FIRST ? 0 : memberStart(own, i, 0);
    // The run's last member ends at the comma before the next field's name, or at the end.
    const ends = last + 1 < LEAD_COUNT ? (last + 2 === LEAD_COUNT ? lastMemberStart(own, starts) : memberStart(own, last + 1, starts)) - 1 : own.length;
    out += out.length === 1 ? own.slice(starts, ends) : `,${own.slice(starts, ends)}`;
    i = last + 1; // unwanted, or past the lead
  }
  return out + '}';
}

/** Characters of `own`'s end searched first for `routing`, its last member (its median length is ~115 on the fixture). */
const ROUTING_TAIL = 256;

/**
 * memberStart of `own`'s last member (`routing`), searched first in the tail
 * alone: the marker is in `own` once (a top-level member), so a match there
 * is the one; when routing is longer, the whole text is searched.
 */
function lastMemberStart(own: string, from: number): number {
  const tail = own.indexOf(MARKERS[LEAD_COUNT - 1], Math.max(from, own.length - ROUTING_TAIL));
  return tail >= 0 ? tail + 1 : memberStart(own, LEAD_COUNT - 1, from);
}

/** Set bits of a mask. */
function bitCount(mask: number): number {
  let n = 0;
  for (let m = mask; m !== 0; m &= m - 1) n++;
  return n;
}

/** Where field i's member (its name's quote) starts in `text`, searching from `from`; throws when absent. */
function memberStart(text: string, i: number, from: number): number {
  const at = text.indexOf(MARKERS[i], from);
  // Not a whole v1 body: a bug upstream, never an answer cut wrong.
  if (at < 0) throw new Error(`projectV1Text: no ${V1_FIELDS[i]} member in the body`);
  return at + 1;
}

/**
 * Appends to `out` the members of fields `first`..`count - 1` named in
 * `fields` (the first `wanted` of them), read from `text`: the member of field `first` starts right after
 * `starts` (a comma, or the object's brace), the last one ends at `lastEnds`.
 */
function cutMembers(text: string, fields: ReadonlySet<string>, wanted: number, first: number, count: number, starts: number, lastEnds: number, out: string): { text: string; count: number } {
  const mask = fieldMask(fields);
  let taken = 0;
  for (let i = first; i < count && taken < wanted; i++) {
    const ends = i + 1 < count ? text.indexOf(MARKERS[i + 1], starts) : lastEnds;
    // Not a whole v1 body: a bug upstream, never an answer cut wrong.
    if (ends < 0) throw new Error(`projectV1Text: no ${V1_FIELDS[i + 1]} member in the body`);
    if ((mask >>> i) & 1) {
      const member = text.slice(starts + 1, ends);
      out += out.length === 1 ? member : `,${member}`;
      taken++;
    }
    starts = ends;
  }
  return { text: out, count: taken };
}
