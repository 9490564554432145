/**
 * Which index URLs a server may pull from: https anywhere; plain http only
 * where every address the host resolves to is loopback, private or
 * unique-local (a publisher inside the operator's own network).
 */
import { lookup } from 'node:dns/promises';
import { isInsideAddress, parseIp } from '../../net/ip.ts';

/** Throws an Error saying why `url` may not be pulled from; resolves when it may. */
export async function checkPullUrl(url: string): Promise<void> {
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
    addresses = parseIp(host) !== null ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch {
    throw new Error(`${host} does not resolve`);
  }
  const outside = addresses.find((a) => !isInsideAddress(a));
  if (addresses.length === 0 || outside !== undefined) {
    throw new Error(`plain http is allowed only to loopback and private addresses; ${host} is ${outside ?? 'unresolved'} (use https)`);
  }
}
