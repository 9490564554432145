/**
 * Scans whole response bodies for RDAP contact data, so tests can prove that
 * free and anonymous answers never expose emails, phones, addresses, person
 * names or raw RDAP (spec 2.3). Pure. Organization names are not contact
 * data (`network.owner` shows the registrant organization on purpose).
 */
import { entitiesDepthFirst } from './entities.ts';
import { isOrganizationEntity } from './registered-owner.ts';
import type { RdapResult } from './types.ts';

/** Keys that only raw RDAP JSON has; a normalized answer never contains them. */
const RAW_RDAP_MARKERS = ['vcardArray', 'rdapConformance', 'objectClassName'];

// Shorter strings would match by chance ("Abuse", area codes).
const MIN_NEEDLE = 5;
const MIN_PHONE_DIGITS = 7;

function comparable(name: string): string {
  return name.trim().replace(/\.$/, '').toLowerCase();
}

function phoneNeedles(phone: string): string[] {
  const digits = phone.replace(/\D/g, '');
  return digits.length >= MIN_PHONE_DIGITS ? [phone, digits] : [phone];
}

/**
 * Strings of a normalized result that must not appear in a free or anonymous
 * body: every email and phone, and each contact name that is not an
 * organization name (not its own `organization`, the registered owner or the
 * network name) and not merely the contact's handle.
 */
export function rdapContactNeedles(result: RdapResult): string[] {
  const orgNames = new Set(
    [result.network?.registered_owner, result.network?.name].filter((n): n is string => !!n).map(comparable),
  );
  const out: string[] = [];
  for (const c of result.contacts) {
    out.push(...(c.emails ?? []), ...(c.phones ?? []).flatMap(phoneNeedles));
    const name = comparable(c.name);
    const isOrgName = orgNames.has(name) || (c.organization !== undefined && comparable(c.organization) === name);
    if (!isOrgName && c.name !== c.handle) out.push(c.name);
  }
  return [...new Set(out.map((n) => n.trim()))].filter((n) => n.length >= MIN_NEEDLE);
}

/**
 * Strings of a raw RDAP response that must not appear in a free or anonymous
 * body: every entity's emails, phones and street-address lines (those with a
 * letter and a digit: city or country alone may rightly appear as geolocation),
 * the names of entities that may be people (`individual`, or no kind and no
 * organisation handle), and raw RDAP keys.
 */
export function rawRdapContactNeedles(json: unknown): string[] {
  const out: string[] = [...RAW_RDAP_MARKERS];
  for (const view of entitiesDepthFirst(json)) {
    const { card } = view;
    out.push(...card.emails, ...card.phones.flatMap(phoneNeedles));
    out.push(...card.addressLines.filter((l) => /\p{L}/u.test(l) && /\d/.test(l)));
    const mayBePerson = card.kind === 'individual' || (card.kind === null && !isOrganizationEntity(view));
    if (mayBePerson && card.fn !== null) out.push(card.fn);
  }
  return [...new Set(out.map((n) => n.trim()))].filter((n) => n.length >= MIN_NEEDLE);
}

/** The needles found in a body (case-insensitive; also as JSON-escaped text). */
export function findNeedles(body: string, needles: string[]): string[] {
  const haystack = body.toLowerCase();
  return needles.filter((n) => {
    const lower = n.toLowerCase();
    return haystack.includes(lower) || haystack.includes(JSON.stringify(lower).slice(1, -1));
  });
}

/** True when a response body contains any email, phone, person name or raw RDAP key from this result. */
export function containsRdapContactData(body: string, result: RdapResult): boolean {
  return findNeedles(body, [...RAW_RDAP_MARKERS, ...rdapContactNeedles(result)]).length > 0;
}

/** True when a response body contains any email, phone, street address, person name or raw key of a raw RDAP response. */
export function containsRawRdapContactData(body: string, json: unknown): boolean {
  return findNeedles(body, rawRdapContactNeedles(json)).length > 0;
}
