/**
 * Pro RDAP: the public surface of src/rdap for routes and tests.
 */
export { createRdapClient, rdapQueryAddress, type RdapClient, type RdapClientOptions, type RdapFailure } from './client.ts';
export { RDAP_DEFAULTS } from './rdap-defaults.ts';
export { normalizeRdapNetwork } from './normalize.ts';
export { publicRdap, ownerFromRdap, allocationFromRdap } from './redact.ts';
export { containsRdapContactData, containsRawRdapContactData, rdapContactNeedles, rawRdapContactNeedles } from './contact-scan.ts';
export { createBootstrap, shippedBootstrap, type RdapBootstrap, type RdapServer } from './bootstrap.ts';
export type { RdapResult, RdapNetwork, RdapAllocation, RdapContact } from './types.ts';
