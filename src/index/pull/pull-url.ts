/**
 * Which index URLs a server may pull from: https anywhere; plain http only
 * where every address the host resolves to is loopback, private or
 * unique-local (a publisher inside the operator's own network).
 */
import { isInsideAddress } from '../../net/ip.ts';
import { resolveHost, type ResolveOptions } from '../../net/resolve-host.ts';

/** Throws an Error saying why `url` may not be pulled from; resolves when it may (a host that does not resolve within `resolve`'s timeout may not). */
export async function checkPullUrl(url: string, resolve: ResolveOptions = {}): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`not a URL: ${JSON.stringify(url)}`);
  }
  if (parsed.protocol === 'https:') return;
  if (parsed.protocol !== 'http:') throw new Error(`${parsed.protocol} is not a pull protocol (https, or http inside the network)`);
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = await resolveHost(host, resolve);
  } catch (e) {
    throw new Error(`${host} does not resolve (${(e as Error).message.slice(0, 120)})`);
  }
  const outside = addresses.find((a) => !isInsideAddress(a));
  if (addresses.length === 0 || outside !== undefined) {
    throw new Error(`plain http is allowed only to loopback and private addresses; ${host} is ${outside ?? 'unresolved'} (use https)`);
  }
}
