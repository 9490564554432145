/**
 * Where a feed download may be redirected. A publisher's redirect is input
 * like its bytes: it is followed only https -> https, only to the catalog
 * entry's own host (or a host the entry names in `allowHosts`), and never to
 * an address that is not public unicast (loopback, private, link-local,
 * unique-local, CGNAT, reserved...), checked on the resolved address before
 * connecting. The origin the operator configured (the catalog URL's or the
 * mirror's) is the one exception: a redirect back to that exact origin is
 * followed as the first request was, whatever its scheme and address.
 */
import { isPublicAddress } from '../net/ip.ts';
import { resolveHost, type ResolveOptions } from '../net/resolve-host.ts';

/** Most redirects one download follows. */
export const MAX_REDIRECTS = 5;

/** What a download may be redirected to. */
export interface RedirectScope {
  /** The origin the operator configured (scheme://host:port of the first request). */
  configuredOrigin: string;
  /** Host names a redirect may lead to (the entry's host and its `allowHosts`), lower case. */
  hosts: ReadonlySet<string>;
}

/** The scope of a download that starts at `url`; `extraHosts` are the entry's named hosts. */
export function redirectScope(url: string, extraHosts: readonly string[] = []): RedirectScope {
  const u = new URL(url);
  return { configuredOrigin: u.origin, hosts: new Set([u.hostname.toLowerCase(), ...extraHosts.map((h) => h.toLowerCase())]) };
}

/** What to do with one redirect: refuse it (with a category), or follow it, after the address check unless it returns to the configured origin. */
export type RedirectVerdict = { refused: string } | { follow: 'configured-origin' | 'after-address-check' };

/** The verdict on a redirect from `from` to `to` before any lookup. */
export function redirectVerdict(from: URL, to: URL, scope: RedirectScope): RedirectVerdict {
  if (to.origin === scope.configuredOrigin && from.protocol === to.protocol) return { follow: 'configured-origin' };
  if (to.protocol !== 'https:') return { refused: from.protocol === 'https:' ? 'redirect refused: https to a plain-http URL' : 'redirect refused: to a URL that is not https' };
  if (to.username || to.password) return { refused: 'redirect refused: URL with credentials' };
  if (!scope.hosts.has(to.hostname.toLowerCase())) return { refused: "redirect refused: to a host other than the catalog entry's" };
  return { follow: 'after-address-check' };
}

/** Resolves a host name; the reason it may not be connected to, or null when every address it resolves to is public. */
export async function addressVerdict(hostname: string, resolve: ResolveOptions = {}): Promise<string | null> {
  let addresses: string[];
  try {
    // A redirect target that does not resolve promptly is refused.
    addresses = await resolveHost(hostname, resolve);
  } catch {
    return 'redirect refused: the host does not resolve';
  }
  if (addresses.length === 0) return 'redirect refused: the host does not resolve';
  // Every address: the connection may use any of them.
  if (!addresses.every(isPublicAddress)) return 'redirect refused: to a loopback, private, link-local or reserved address';
  return null;
}
