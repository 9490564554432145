/**
 * The normalized RDAP object of spec 2.3 (the Pro-only `rdap` field), and the
 * allocation shape shared with `network.allocation` of spec 2.1.
 */
import type { Static } from '@sinclair/typebox';
import type { Rdap, RdapAllocation as RdapAllocationSchema, RdapContact as RdapContactSchema, RdapNetwork as RdapNetworkSchema } from '../contract/v1.ts';

/** Where an address block sits and who handed it out: cidr, "start - end" range, registry short name, country (declared in src/contract/v1.ts). */
export type RdapAllocation = Static<typeof RdapAllocationSchema>;

/** The registry's network object, reduced to what spec 2.3 shows; `registered_owner` is never a private person's name. */
export type RdapNetwork = Static<typeof RdapNetworkSchema>;

/** One RDAP entity (spec 2.3 `contacts[]`). Optional fields are omitted when empty. */
export type RdapContact = Static<typeof RdapContactSchema>;

/** The spec 2.3 object. `available: false` means the registry could not be asked or gave no network. */
export type RdapResult = Static<typeof Rdap>;

/** A fresh "RDAP unavailable" result (fresh so callers may mutate it safely). */
export function unavailableRdap(): RdapResult {
  return { available: false, network: null, contacts: [] };
}
