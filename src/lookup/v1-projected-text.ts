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
  let out = '{';
  let left = fields.size;
  let starts = 1; // where the current field's member starts: after "{", else at its comma
  for (let i = 0; i < V1_FIELDS.length && left > 0; i++) {
    const ends = i + 1 < V1_FIELDS.length ? whole.indexOf(MARKERS[i + 1], starts) : whole.length - 1;
    // Not a whole v1 body: a bug upstream, never an answer cut wrong.
    if (ends < 0) throw new Error(`projectV1Text: no ${V1_FIELDS[i + 1]} member in the body`);
    if (fields.has(V1_FIELDS[i])) {
      const member = i === 0 ? whole.slice(starts, ends) : whole.slice(starts + 1, ends);
      out += out.length === 1 ? member : `,${member}`;
      left--;
    }
    starts = ends;
  }
  return out + '}';
}
