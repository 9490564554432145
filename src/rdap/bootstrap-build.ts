/**
 * Turns IANA RDAP bootstrap files (RFC 9224: ipv4.json, ipv6.json, asn.json)
 * into the compact table shipped as bootstrap-data.json. Pure: documents in,
 * table out; reading and writing files is tools/refresh-rdap-bootstrap.ts.
 */
import { parseCidr } from '../net/ip.ts';
import { registryNameForRdapUrl } from './registry-names.ts';

export type BootstrapKind = 'ipv4' | 'ipv6' | 'asn';

/** The shipped table: registry base URLs and, per family, each registry's prefixes (or ASN ranges). */
export interface BootstrapData {
  generated_by: string;
  /** `publication` timestamps of the IANA files used, so staleness is visible. */
  publication: Record<BootstrapKind, string | null>;
  /** Registry name -> RDAP base URL (https preferred, always ending in "/"). */
  registries: Record<string, string>;
  ipv4: Record<string, string[]>;
  ipv6: Record<string, string[]>;
  /** Registry name -> ASN ranges "first-last" or single numbers, as IANA writes them. */
  asn: Record<string, string[]>;
}

interface ServiceEntry {
  entries: string[];
  urls: string[];
}

function servicesOf(doc: unknown): ServiceEntry[] {
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { services?: unknown }).services)) {
    throw new Error('not an RDAP bootstrap file: no "services" array');
  }
  return (doc as { services: unknown[] }).services.map((s, i) => {
    if (!Array.isArray(s) || s.length < 2 || !Array.isArray(s[0]) || !Array.isArray(s[1])) {
      throw new Error(`bootstrap service #${i} is not [[entries], [urls]]`);
    }
    const entries = s[0].filter((e: unknown): e is string => typeof e === 'string');
    const urls = s[1].filter((u: unknown): u is string => typeof u === 'string');
    if (urls.length === 0) throw new Error(`bootstrap service #${i} has no URL`);
    return { entries, urls };
  });
}

/** Which bootstrap registry a document is, judged by its entries (IPv6 prefixes have ':', IPv4 '.', ASNs digits). */
export function bootstrapKindOf(doc: unknown): BootstrapKind {
  const entries = servicesOf(doc).flatMap((s) => s.entries);
  if (entries.length === 0) throw new Error('bootstrap file has no entries');
  if (entries.every((e) => e.includes(':'))) return 'ipv6';
  if (entries.every((e) => e.includes('.') && e.includes('/'))) return 'ipv4';
  if (entries.every((e) => /^\d+(-\d+)?$/.test(e))) return 'asn';
  throw new Error('bootstrap file is neither ipv4, ipv6 nor asn (a DNS bootstrap file is not used)');
}

/** The base URL to use from a service's list: the first https one, with a trailing slash. */
export function preferredBaseUrl(urls: string[]): string {
  const chosen = urls.find((u) => u.toLowerCase().startsWith('https://')) ?? urls[0];
  return chosen.endsWith('/') ? chosen : `${chosen}/`;
}

function checkEntry(kind: BootstrapKind, entry: string): void {
  if (kind === 'asn') {
    const [a, b = a] = entry.split('-').map(Number);
    if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b) || a > b || b > 0xffffffff) {
      throw new Error(`bad ASN range in bootstrap: ${entry}`);
    }
    return;
  }
  const cidr = parseCidr(entry);
  if (!cidr || cidr.family !== (kind === 'ipv4' ? 4 : 6)) throw new Error(`bad ${kind} prefix in bootstrap: ${entry}`);
}

/** Builds the shipped table from parsed IANA bootstrap documents (any subset of ipv4/ipv6/asn, each at most once). */
export function buildBootstrapData(docs: unknown[]): BootstrapData {
  const out: BootstrapData = {
    generated_by: 'tools/refresh-rdap-bootstrap.ts from IANA RDAP bootstrap files (RFC 9224); do not edit by hand',
    publication: { ipv4: null, ipv6: null, asn: null },
    registries: {},
    ipv4: {},
    ipv6: {},
    asn: {},
  };
  const seen = new Set<BootstrapKind>();
  for (const doc of docs) {
    const kind = bootstrapKindOf(doc);
    if (seen.has(kind)) throw new Error(`two ${kind} bootstrap files given`);
    seen.add(kind);
    const publication = (doc as { publication?: unknown }).publication;
    out.publication[kind] = typeof publication === 'string' ? publication : null;
    for (const service of servicesOf(doc)) {
      const base = preferredBaseUrl(service.urls);
      const name = registryNameForRdapUrl(base);
      if (name === null) throw new Error(`bootstrap URL is not a URL: ${base}`);
      const known = out.registries[name];
      if (known !== undefined && known !== base) throw new Error(`registry ${name} has two base URLs: ${known} and ${base}`);
      out.registries[name] = base;
      for (const entry of service.entries) checkEntry(kind, entry);
      (out[kind][name] ??= []).push(...service.entries);
    }
  }
  out.registries = Object.fromEntries(Object.entries(out.registries).sort(([a], [b]) => a.localeCompare(b)));
  return out;
}
