/**
 * RDAP entities (the people and organizations attached to a network, nested
 * to any depth) -> spec 2.3 contacts. Pure. The registered owner is
 * registered-owner.ts.
 */
import { readJCard, type JCardFacts } from './jcard.ts';
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
const MAX_ENTITIES = 500;

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

function merged(into: string[] | undefined, more: string[], caseless: boolean): string[] | undefined {
  const out = [...(into ?? [])];
  for (const v of more) {
    const key = caseless ? v.toLowerCase() : v;
    if (!out.some((o) => (caseless ? o.toLowerCase() : o) === key)) out.push(v);
  }
  return out.length ? out : undefined;
}

/**
 * Spec 2.3 contacts from all entities, nested ones included. An entity that
 * appears more than once (ARIN repeats a POC under the org) becomes one contact
 * with the union of its roles. `name` is the jCard fn, else its org, else the
 * handle (RIPE references some entities by handle only, with no jCard).
 */
export function contactsFromEntities(root: unknown): RdapContact[] {
  const contacts: RdapContact[] = [];
  const byHandle = new Map<string, RdapContact>();
  for (const { handle, roles, card } of entitiesDepthFirst(root)) {
    const name = card.fn ?? card.org ?? handle;
    if (name === null) continue;
    const existing = handle === null ? undefined : byHandle.get(handle);
    if (existing) {
      existing.roles = [...new Set([...existing.roles, ...roles])];
      existing.organization ??= card.org ?? undefined;
      const phones = merged(existing.phones, card.phones, false);
      const emails = merged(existing.emails, card.emails, true);
      if (phones) existing.phones = phones;
      if (emails) existing.emails = emails;
      continue;
    }
    const contact: RdapContact = handle !== null ? { handle, roles: [...roles], name } : { roles: [...roles], name };
    if (card.org !== null) contact.organization = card.org;
    if (card.phones.length) contact.phones = [...card.phones];
    if (card.emails.length) contact.emails = [...card.emails];
    contacts.push(contact);
    if (handle !== null) byHandle.set(handle, contact);
  }
  return contacts;
}
