/** Test support: real RDAP answers (test/fixtures/feeds/rdap), and a real RDAP server on loopback that serves them. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** Directory of the real RDAP responses and IANA bootstrap files (read-only, beside the repo). */
export const RDAP_FEEDS = resolve(import.meta.dir, '../fixtures/feeds/rdap');

/** An RDAP fixture file, parsed. */
export function readRdapFeed(name: string): unknown {
  return JSON.parse(readFileSync(resolve(RDAP_FEEDS, name), 'utf8'));
}

/** Which real response file answers `ip/<address>` (the address each response was captured for). */
export const FEED_FOR_IP: Record<string, string> = {
  '192.198.0.0': 'icann-rdap-arin-network_192_198_0_0.json',
  '74.125.225.229': 'ipwhois-extracted-arin-ip-74_125_225_229.json',
  '2001:4860:4860::8888': 'ipwhois-extracted-arin-ip-2001_4860_4860_8888.json',
  '62.239.237.1': 'ipwhois-extracted-ripe-ip-62_239_237_1.json',
  '2a00:2381:ffff::1': 'ipwhois-extracted-ripe-ip-2a00_2381_ffff_1.json',
  '210.107.73.73': 'ipwhois-extracted-apnic-ip-210_107_73_73.json',
  '2001:240:10c:1::ca20:9d1d': 'ipwhois-extracted-apnic-ip-2001_240_10c_1_ca20_9d1d.json',
  '200.57.141.161': 'ipwhois-extracted-lacnic-ip-200_57_141_161.json',
  '2801:10:c000::': 'ipwhois-extracted-lacnic-ip-2801_10_c000.json',
  '196.11.240.215': 'ipwhois-extracted-afrinic-ip-196_11_240_215.json',
  '2001:43f8:7b0::': 'ipwhois-extracted-afrinic-ip-2001_43f8_7b0.json',
  '1.1.1.1': 'whoisit-rdap_response_ip_v4.json',
  '130.59.31.80': 'whoisit-rdap_response_ip_v4_2.json',
  '13.107.4.50': 'whoisit-rdap_response_ip_v4_3.json',
  '2001:4860::8844': 'whoisit-rdap_response_ip_v6.json',
};

/** A running loopback RDAP server and the paths it was asked for. */
export interface MockRdapServer {
  /** Base URL ending in "/". */
  base: string;
  requests: string[];
  stop(): void;
}

/** Serves a fixture file as an RDAP answer. */
export function feedResponse(name: string, status = 200): Response {
  return new Response(Bun.file(resolve(RDAP_FEEDS, name)), { status, headers: { 'content-type': 'application/rdap+json' } });
}

/**
 * Starts a real HTTP server on 127.0.0.1 (port 0). Without a handler it answers
 * `/ip/<address>` with the real file captured for that address, 404 otherwise.
 */
export function startMockRdap(handler?: (url: URL, req: Request) => Response | Promise<Response>): MockRdapServer {
  const requests: string[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      requests.push(decodeURIComponent(url.pathname));
      if (handler) return handler(url, req);
      const file = FEED_FOR_IP[decodeURIComponent(url.pathname).replace(/^\/ip\//, '')];
      return file ? feedResponse(file) : new Response('{"errorCode":404,"title":"Not Found"}', { status: 404 });
    },
  });
  return { base: `http://127.0.0.1:${server.port}/`, requests, stop: () => server.stop(true) };
}
