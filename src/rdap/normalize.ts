/**
 * RDAP "ip network" response (RFC 9083 section 5.4) -> the spec 2.3 object.
 * Pure: the same JSON always gives the same result; fetching is client.ts.
 */
import { formatCidr, formatIp, parseCidr, parseIp, prefixRange, rangeToCidrs, type Cidr, type ParsedIp } from '../net/ip.ts';
import { contactsFromEntities } from './entities.ts';
import { parseRdapAddress } from './rdap-address.ts';
import { registeredOwnerOf } from './registered-owner.ts';
import { knownRegistryForRdapUrl, registryForPort43 } from './registry-names.ts';
import { unavailableRdap, type RdapAllocation, type RdapResult } from './types.ts';

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function text(v: unknown): string | null {
  return typeof v === 'string' && v.trim() ? v.trim() : null;
}

/** True for an RDAP ip network object; old RIPE answers omit `objectClassName` but carry the addresses. */
export function isIpNetworkObject(json: unknown): json is Json {
  if (!isObject(json) || 'errorCode' in json) return false;
  const cls = json.objectClassName;
  if (typeof cls === 'string') return cls.toLowerCase() === 'ip network';
  return typeof json.startAddress === 'string' && typeof json.endAddress === 'string';
}

/** Registry that produced the answer: its port-43 server, else its self link, else the caller's hint. */
export function registryOf(json: Json, registryHint: string | null): string | null {
  const byPort43 = typeof json.port43 === 'string' ? registryForPort43(json.port43) : null;
  if (byPort43) return byPort43;
  const links = Array.isArray(json.links) ? json.links.filter(isObject) : [];
  for (const link of links) {
    if (link.rel === 'self' && typeof link.href === 'string') {
      const byLink = knownRegistryForRdapUrl(link.href);
      if (byLink) return byLink;
    }
  }
  return registryHint;
}

/** The prefixes the registry lists in the cidr0 extension (`cidr0_cidrs`). */
function cidr0Prefixes(json: Json): Cidr[] {
  if (!Array.isArray(json.cidr0_cidrs)) return [];
  const out: Cidr[] = [];
  for (const entry of json.cidr0_cidrs) {
    if (!isObject(entry)) continue;
    const prefix = text(entry.v4prefix) ?? text(entry.v6prefix);
    const len = entry.length;
    if (prefix === null || typeof len !== 'number') continue;
    const cidr = parseCidr(`${prefix}/${len}`);
    if (cidr) out.push(cidr);
  }
  return out;
}

function contains(c: Cidr, ip: ParsedIp): boolean {
  return c.family === ip.family && c.start <= ip.value && ip.value <= c.end;
}

/**
 * The allocation of spec 2.1. `cidr` is the block itself when it is one
 * prefix; when it spans several (ARIN's MSFT 13.64.0.0 - 13.107.255.255), the
 * one holding the looked-up address, or null when no address is given.
 */
export function allocationOf(json: Json, registry: string | null, ip?: string): RdapAllocation {
  const start = parseRdapAddress(json.startAddress);
  const end = parseRdapAddress(json.endAddress);
  const rangeOk = start !== null && end !== null && start.family === end.family && start.value <= end.value;
  let prefixes = cidr0Prefixes(json);
  if (prefixes.length === 0 && rangeOk) {
    prefixes = rangeToCidrs(start.family, start.value, end.value).map((p) => ({
      family: start.family,
      ...prefixRange(start.family, p.start, p.len),
      len: p.len,
    }));
  }
  const target = ip === undefined ? null : parseIp(ip);
  const chosen = prefixes.length === 1 ? prefixes[0] : target ? prefixes.find((p) => contains(p, target)) : undefined;
  const country = text(json.country);
  return {
    cidr: chosen ? formatCidr(chosen.family, chosen.start, chosen.len) : null,
    range: rangeOk ? `${formatIp(start.family, start.value)} - ${formatIp(end.family, end.value)}` : null,
    registry,
    country: country !== null && /^[A-Za-z]{2}$/.test(country) ? country.toUpperCase() : null,
  };
}

/**
 * Normalizes an RDAP ip network response into the spec 2.3 object.
 * `registryHint` names the registry that was asked (used when the answer does
 * not say); `ip` picks the right prefix of a multi-prefix block. Anything that
 * is not an ip network (an RDAP error object, HTML, null) gives `available: false`.
 */
export function normalizeRdapNetwork(json: unknown, registryHint: string | null, ip?: string): RdapResult {
  if (!isIpNetworkObject(json)) return unavailableRdap();
  const registry = registryOf(json, registryHint);
  return {
    available: true,
    network: {
      handle: text(json.handle),
      name: text(json.name),
      registry,
      registered_owner: registeredOwnerOf(json),
      allocation: allocationOf(json, registry, ip),
    },
    contacts: contactsFromEntities(json),
  };
}
