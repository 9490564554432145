/**
 * What of an RDAP result may leave the service without a Pro contacts include.
 * Pure.
 */
import type { RdapAllocation, RdapResult } from './types.ts';

/** The result without contacts (for an answer allowed the `rdap` object but not `include=rdap_contacts`). */
export function publicRdap(result: RdapResult): RdapResult {
  return {
    available: result.available,
    network: result.network && { ...result.network, allocation: { ...result.network.allocation } },
    contacts: [],
  };
}

/** The registrant organization for `network.owner` of ordinary lookups (never a person: registered-owner.ts); null when RDAP gave none. */
export function ownerFromRdap(result: RdapResult): string | null {
  return result.available ? (result.network?.registered_owner ?? null) : null;
}

/** The allocation for `network.allocation` of ordinary lookups; null when RDAP gave none. */
export function allocationFromRdap(result: RdapResult): RdapAllocation | null {
  return result.available && result.network ? { ...result.network.allocation } : null;
}
