/**
 * RDAP entities (the people and organizations attached to a network, nested
 * to any depth) -> spec 2.3 contacts. Pure. The registered owner is
 * registered-owner.ts.
 */
import { readJCard, UniqueValues, type JCardFacts } from './jcard.ts';
import type { RdapContact } from './types.ts';

/** One entity with its jCard read. */
export interface EntityView {
  handle: string | null;
  roles: string[];
  card: JCardFacts;
  depth: number;
}

// Bounds against hostile or broken servers; real responses nest 2-3 deep with a handful of entities.
const MAX_DEPTH = 8;
const MAX_ENTITIES = 200;

function childEntities(node: unknown): unknown[] {
  if (typeof node !== 'object' || node === null) return [];
  const list = (node as { entities?: unknown }).entities;
  return Array.isArray(list) ? list.filter((e) => typeof e === 'object' && e !== null) : [];
}

function viewOf(entity: unknown, depth: number): EntityView {
  const e = entity as { handle?: unknown; roles?: unknown; vcardArray?: unknown };
  const roles = Array.isArray(e.roles)
    ? [...new Set(e.roles.filter((r): r is string => typeof r === 'string').map((r) => r.trim().toLowerCase()).filter(Boolean))]
    : [];
  const handle = typeof e.handle === 'string' && e.handle.trim() ? e.handle.trim() : null;
  return { handle, roles, card: readJCard(e.vcardArray), depth };
}

/** Every entity under an RDAP object, parents before their children (document order). */
export function entitiesDepthFirst(root: unknown): EntityView[] {
  const out: EntityView[] = [];
  const visit = (node: unknown, depth: number): void => {
    if (depth > MAX_DEPTH) return;
    for (const child of childEntities(node)) {
      if (out.length >= MAX_ENTITIES) return;
      out.push(viewOf(child, depth));
      visit(child, depth + 1);
    }
  };
  visit(root, 1);
  return out;
}

/** Every entity under an RDAP object, shallowest first (the network's own registrant before nested ones). */
export function entitiesBreadthFirst(root: unknown): EntityView[] {
  return entitiesDepthFirst(root)
    .map((view, order) => ({ view, order }))
    .sort((a, b) => a.view.depth - b.view.depth || a.order - b.order)
    .map(({ view }) => view);
}

/** A contact being gathered: its lists de-duplicated as they grow (linear in the entries read). */
interface Gathering {
  contact: RdapContact;
  roles: Set<string>;
  phones: UniqueValues;
  emails: UniqueValues;
}

/**
 * Spec 2.3 contacts from all entities, nested ones included. An entity that
 * appears more than once (ARIN repeats a POC under the org) becomes one contact
 * with the union of its roles. `name` is the jCard fn, else its org, else the
 * handle (RIPE references some entities by handle only, with no jCard).
 */
export function contactsFromEntities(root: unknown): RdapContact[] {
  const gathered: Gathering[] = [];
  const byHandle = new Map<string, Gathering>();
  for (const { handle, roles, card } of entitiesDepthFirst(root)) {
    const name = card.fn ?? card.org ?? handle;
    if (name === null) continue;
    let g = handle === null ? undefined : byHandle.get(handle);
    if (g) g.contact.organization ??= card.org ?? undefined;
    else {
      const contact: RdapContact = handle !== null ? { handle, roles: [], name } : { roles: [], name };
      if (card.org !== null) contact.organization = card.org;
      g = { contact, roles: new Set(), phones: new UniqueValues(false), emails: new UniqueValues(true) };
      gathered.push(g);
      if (handle !== null) byHandle.set(handle, g);
    }
    for (const r of roles) g.roles.add(r);
    g.phones.addAll(card.phones);
    g.emails.addAll(card.emails);
  }
  return gathered.map(({ contact, roles, phones, emails }) => {
    contact.roles = [...roles];
    if (phones.values.length) contact.phones = phones.values;
    if (emails.values.length) contact.emails = emails.values;
    return contact;
  });
}
