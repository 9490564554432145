/**
 * Which RDAP entity may name the registered owner, and with which name. The
 * owner is shown to everyone (`network.owner`), so it only ever comes from an
 * organization entity, and never with a name that carries a person's contact
 * data. Pure.
 */
import { entitiesBreadthFirst, entitiesDepthFirst, type EntityView } from './entities.ts';

/**
 * Organisation object handles of the RPSL registries (RIPE NCC, APNIC,
 * AFRINIC): `ORG-<id>-<source>`, e.g. ORG-SG2-RIPE, ORG-TA38-AFRINIC. Person
 * and role handles there never start with ORG-. ARIN and LACNIC org handles
 * have no such form (GOGL, MX-TSCV6-LACNIC); both registries mark their
 * organizations with vCard `kind: org` instead.
 */
const RPSL_ORG_HANDLE = /^ORG-[A-Z0-9]+-(?:RIPE|AP|AFRINIC)$/i;

/** Longer names are not shown: real registrant names are well under this. */
export const MAX_OWNER_LENGTH = 200;

const EMAIL = /[^\s@<>()"',;:]+@[^\s@<>()"',;:]+\.[a-z]{2,}/i;
// A run of digits with phone punctuation; counted below so "Level 3" or "1&1" are not phones.
const PHONE_LIKE = /\+?\(?\d[\d\s().\/-]*\d/g;
const MIN_PHONE_DIGITS = 7;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** True for an organization entity: vCard `kind: org`, or no kind and an RPSL organisation handle. */
export function isOrganizationEntity(view: EntityView): boolean {
  if (view.card.kind !== null) return view.card.kind === 'org';
  return view.handle !== null && RPSL_ORG_HANDLE.test(view.handle);
}

/** True when a name carries an e-mail address or a phone number (a person's contact data, not a name). */
export function carriesContactData(name: string): boolean {
  if (EMAIL.test(name)) return true;
  for (const run of name.match(PHONE_LIKE) ?? []) {
    if (run.replace(/\D/g, '').length >= MIN_PHONE_DIGITS) return true;
  }
  return false;
}

/** The name an organization entity may be shown under; null when it has none fit to show. */
function showableName(view: EntityView, personNames: ReadonlySet<string>): string | null {
  const name = view.card.fn ?? view.card.org;
  if (name === null || name.length > MAX_OWNER_LENGTH || CONTROL.test(name)) return null;
  // AFRINIC-style fn equal to the handle is an identifier, not a name.
  if (view.handle !== null && name.toLowerCase() === view.handle.toLowerCase()) return null;
  if (carriesContactData(name)) return null;
  // An "organization" named exactly like a person of the same answer is that person.
  if (personNames.has(name.toLowerCase())) return null;
  return name;
}

/** Names of the answer's entities that are people (vCard `kind: individual`), in lower case. */
function personNamesOf(root: unknown): Set<string> {
  const out = new Set<string>();
  for (const { card } of entitiesDepthFirst(root)) {
    if (card.kind === 'individual' && card.fn !== null) out.add(card.fn.toLowerCase());
  }
  return out;
}

/**
 * The registrant organization's name: the shallowest entity with role
 * `registrant` that is an organization and has a showable name; null when
 * none is (a person, a role account, a maintainer or an unnamed org is never
 * the owner).
 */
export function registeredOwnerOf(root: unknown): string | null {
  let personNames: Set<string> | null = null;
  for (const view of entitiesBreadthFirst(root)) {
    if (!view.roles.includes('registrant') || !isOrganizationEntity(view)) continue;
    personNames ??= personNamesOf(root);
    const name = showableName(view, personNames);
    if (name !== null) return name;
  }
  return null;
}
