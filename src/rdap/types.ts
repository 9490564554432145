/**
 * The normalized RDAP object of spec 2.3 (the Pro-only `rdap` field), and the
 * allocation shape shared with `network.allocation` of spec 2.1.
 */

/** Where an address block sits and who handed it out (spec 2.1 `network.allocation`). */
export interface RdapAllocation {
  /** A CIDR that contains the looked-up address (or the whole block when it is one prefix); null when unknown. */
  cidr: string | null;
  /** "start - end" in canonical address text; null when the registry gave no usable range. */
  range: string | null;
  /** Registry short name: arin, ripencc, apnic, lacnic, afrinic (or the server's host for others). */
  registry: string | null;
  /** Two-letter country code of the registration, upper case; null when absent (ARIN gives none). */
  country: string | null;
}

/** The registry's network object, reduced to what spec 2.3 shows. */
export interface RdapNetwork {
  handle: string | null;
  name: string | null;
  registry: string | null;
  /** Name of the registrant organization; never a private person's name. */
  registered_owner: string | null;
  allocation: RdapAllocation;
}

/** One RDAP entity (spec 2.3 `contacts[]`). Optional fields are omitted when empty. */
export interface RdapContact {
  handle?: string;
  roles: string[];
  name: string;
  organization?: string;
  phones?: string[];
  emails?: string[];
}

/** The spec 2.3 object. `available: false` means the registry could not be asked or gave no network. */
export interface RdapResult {
  available: boolean;
  network: RdapNetwork | null;
  contacts: RdapContact[];
}

/** A fresh "RDAP unavailable" result (fresh so callers may mutate it safely). */
export function unavailableRdap(): RdapResult {
  return { available: false, network: null, contacts: [] };
}
