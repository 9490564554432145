/**
 * Short registry names (spec 2.1 shows `arin`) from the host names that
 * identify a registry: its RDAP server or its port-43 WHOIS server.
 */

const RDAP_HOSTS: Record<string, string> = {
  'rdap.arin.net': 'arin',
  'rdap.db.ripe.net': 'ripencc',
  'rdap.apnic.net': 'apnic',
  'rdap.lacnic.net': 'lacnic',
  'rdap.afrinic.net': 'afrinic',
};

const WHOIS_HOSTS: Record<string, string> = {
  'whois.arin.net': 'arin',
  'whois.ripe.net': 'ripencc',
  'whois.apnic.net': 'apnic',
  'whois.lacnic.net': 'lacnic',
  'whois.afrinic.net': 'afrinic',
};

/** Registry name of an RDAP server URL: the RIR's short name, else the URL's host; null when not a URL. */
export function registryNameForRdapUrl(url: string): string | null {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
  return RDAP_HOSTS[host] ?? host;
}

/** Registry name of a known RIR RDAP server URL; null for any other host. */
export function knownRegistryForRdapUrl(url: string): string | null {
  try {
    return RDAP_HOSTS[new URL(url).hostname.toLowerCase()] ?? null;
  } catch {
    return null;
  }
}

/** Registry name of a port-43 WHOIS host (e.g. `whois.ripe.net` -> `ripencc`); null when unknown. */
export function registryForPort43(host: string): string | null {
  return WHOIS_HOSTS[host.trim().toLowerCase()] ?? null;
}
