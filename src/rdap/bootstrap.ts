/**
 * Finds the registry RDAP server for an address (or ASN) from the bootstrap
 * table: the most specific matching prefix wins (RFC 9224 section 5).
 */
import { parseCidr, parseIp, type Addr, type Family } from '../net/ip.ts';
import type { BootstrapData } from './bootstrap-build.ts';
import shippedData from './bootstrap-data.json';

/** The registry server to ask. */
export interface RdapServer {
  registry: string;
  /** Base URL ending in "/"; queries go to `<base>ip/<address>`. */
  base: string;
}

/** Lookups over one bootstrap table. */
export interface RdapBootstrap {
  /** The server for an address (text); null when the address is invalid or no registry covers it. */
  serverForIp(ip: string): RdapServer | null;
  /** The server for an AS number; null when no registry covers it. */
  serverForAsn(asn: number): RdapServer | null;
  /** The registry whose base URL the given URL falls under (to name where a redirect landed); null when none. */
  registryForUrl(url: string): string | null;
  /** Every registry base URL of the table (the hosts a redirect may lead to). */
  baseUrls(): string[];
}

interface PrefixRow {
  family: Family;
  start: Addr;
  end: Addr;
  len: number;
  registry: string;
}

interface AsnRow {
  first: number;
  last: number;
  registry: string;
}

function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/** Builds the lookups over a bootstrap table; throws on a malformed table (the shipped one is generated). */
export function createBootstrap(data: BootstrapData): RdapBootstrap {
  const rows: PrefixRow[] = [];
  for (const family of ['ipv4', 'ipv6'] as const) {
    for (const [registry, prefixes] of Object.entries(data[family])) {
      for (const prefix of prefixes) {
        const cidr = parseCidr(prefix);
        if (!cidr) throw new Error(`bootstrap: bad prefix ${prefix}`);
        rows.push({ ...cidr, registry });
      }
    }
  }
  // Longest prefix first, so the first match is the most specific one.
  rows.sort((a, b) => b.len - a.len);
  const asnRows: AsnRow[] = Object.entries(data.asn).flatMap(([registry, ranges]) =>
    ranges.map((r) => {
      const [first, last = first] = r.split('-').map(Number);
      return { first, last, registry };
    }),
  );
  const serverOf = (registry: string): RdapServer | null => {
    const base = data.registries[registry];
    return base === undefined ? null : { registry, base };
  };
  return {
    serverForIp(ip) {
      const parsed = parseIp(ip);
      if (!parsed) return null;
      const row = rows.find((r) => r.family === parsed.family && r.start <= parsed.value && parsed.value <= r.end);
      return row ? serverOf(row.registry) : null;
    },
    serverForAsn(asn) {
      const row = asnRows.find((r) => r.first <= asn && asn <= r.last);
      return row ? serverOf(row.registry) : null;
    },
    registryForUrl(url) {
      const target = parseUrl(url);
      if (!target) return null;
      // Scheme is ignored: registries link to their own data over http and https alike.
      const hit = Object.entries(data.registries).find(([, base]) => {
        const b = parseUrl(base);
        return b !== null && b.host === target.host && target.pathname.startsWith(b.pathname);
      });
      return hit ? hit[0] : null;
    },
    baseUrls() {
      return Object.values(data.registries);
    },
  };
}

let shipped: RdapBootstrap | null = null;
/** The shipped table, built on its first question rather than when the module loads (every serving thread loads it; few ask RDAP). */
const shippedTable = (): RdapBootstrap => (shipped ??= createBootstrap(shippedData as BootstrapData));

/** The table shipped in bootstrap-data.json (IANA bootstrap; refresh with tools/refresh-rdap-bootstrap.ts). */
export const shippedBootstrap: RdapBootstrap = {
  serverForIp: (ip) => shippedTable().serverForIp(ip),
  serverForAsn: (asn) => shippedTable().serverForAsn(asn),
  registryForUrl: (url) => shippedTable().registryForUrl(url),
  baseUrls: () => shippedTable().baseUrls(),
};
