/**
 * normalizeRdapNetwork on every real RDAP response in shared/feeds/rdap,
 * with values checked by reading the files.
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { normalizeRdapNetwork } from '../../src/rdap/normalize.ts';
import { parseRdapAddress } from '../../src/rdap/rdap-address.ts';
import { readRdapFeed } from './rdap-feeds.ts';

const norm = (file: string, ip?: string, hint: string | null = null) => normalizeRdapNetwork(readRdapFeed(file), hint, ip);

describe('ARIN', () => {
  test('192.198.0.0 (cidr0, nested POC repeated at top level)', () => {
    expect(norm('icann-rdap-arin-network_192_198_0_0.json', '192.198.0.0')).toEqual({
      available: true,
      network: {
        handle: 'NET-192-198-0-0-1',
        name: 'RADIOLINK-ARIN-1',
        registry: 'arin',
        registered_owner: 'Radio Link Internet',
        allocation: { cidr: '192.198.0.0/22', range: '192.198.0.0 - 192.198.3.255', registry: 'arin', country: null },
      },
      contacts: [
        { handle: 'DP-41', roles: ['registrant'], name: 'Radio Link Internet' },
        {
          handle: 'PETSI-ARIN',
          // Nested copy has administrative; the top-level copy repeats the others: one contact, roles merged.
          roles: ['noc', 'technical', 'administrative', 'abuse'],
          name: 'Daniel Petsinger',
          phones: ['+1-507-417-4176'],
          emails: ['daniel.petsinger@radiolinkinternet.com'],
        },
      ],
    });
  });

  test('74.125.225.229: zero-padded addresses, no cidr0, range is one prefix', () => {
    const r = norm('ipwhois-extracted-arin-ip-74_125_225_229.json', '74.125.225.229');
    expect(r.network).toEqual({
      handle: 'NET-74-125-0-0-1',
      name: 'GOOGLE',
      registry: 'arin',
      registered_owner: 'Google Inc.',
      allocation: { cidr: '74.125.0.0/16', range: '74.125.0.0 - 74.125.255.255', registry: 'arin', country: null },
    });
    expect(r.contacts).toEqual([
      { handle: 'GOGL', roles: ['registrant'], name: 'Google Inc.' },
      {
        handle: 'ZG39-ARIN',
        roles: ['abuse', 'administrative', 'technical'],
        name: 'Google Inc',
        organization: 'Google Inc',
        phones: ['+1-650-253-0000'],
        emails: ['arin-contact@google.com'],
      },
    ]);
  });

  test('2001:4860:4860::8888: uncompressed upper-case IPv6 range becomes canonical text', () => {
    const r = norm('ipwhois-extracted-arin-ip-2001_4860_4860_8888.json', '2001:4860:4860::8888');
    expect(r.network?.allocation).toEqual({
      cidr: '2001:4860::/32',
      range: '2001:4860:: - 2001:4860:ffff:ffff:ffff:ffff:ffff:ffff',
      registry: 'arin',
      country: null,
    });
    expect(r.network?.handle).toBe('NET6-2001-4860-1');
    expect(r.network?.registered_owner).toBe('Google Inc.');
    expect(r.contacts.map((c) => [c.handle, c.roles])).toEqual([
      ['GOGL', ['registrant']],
      ['ZG39-ARIN', ['technical', 'administrative', 'abuse', 'noc']],
    ]);
  });

  test('13.64.0.0 - 13.107.255.255 (MSFT): three cidr0 prefixes, the one holding the address is chosen', () => {
    const file = 'whoisit-rdap_response_ip_v4_3.json';
    expect(norm(file, '13.107.4.50').network?.allocation.cidr).toBe('13.104.0.0/14');
    expect(norm(file, '13.70.1.1').network?.allocation.cidr).toBe('13.64.0.0/11');
    expect(norm(file, '13.99.0.1').network?.allocation.cidr).toBe('13.96.0.0/13');
    // Without an address no single prefix is right, so none is claimed.
    expect(norm(file).network?.allocation).toEqual({ cidr: null, range: '13.64.0.0 - 13.107.255.255', registry: 'arin', country: null });
    const r = norm(file, '13.107.4.50');
    expect(r.network?.registered_owner).toBe('Microsoft Corporation');
    expect(r.network?.name).toBe('MSFT');
    expect(r.contacts.map((c) => c.handle)).toEqual(['MSFT', 'MRPD-ARIN', 'IPHOS5-ARIN', 'MAC74-ARIN']);
    expect(r.contacts[2]).toEqual({
      handle: 'IPHOS5-ARIN',
      roles: ['administrative', 'technical'],
      name: 'IPHostmaster IPHostmaster',
      phones: ['+1-425-538-6637'],
      emails: ['iphostmaster@microsoft.com'],
    });
  });

  test('2001:4860:: (Google LLC): cidr0 v6prefix', () => {
    const r = norm('whoisit-rdap_response_ip_v6.json', '2001:4860::8844');
    expect(r.network).toEqual({
      handle: 'NET6-2001-4860-1',
      name: 'GOOGLE-IPV6',
      registry: 'arin',
      registered_owner: 'Google LLC',
      allocation: { cidr: '2001:4860::/32', range: '2001:4860:: - 2001:4860:ffff:ffff:ffff:ffff:ffff:ffff', registry: 'arin', country: null },
    });
    expect(r.contacts.find((c) => c.handle === 'ABUSE5250-ARIN')).toEqual({
      handle: 'ABUSE5250-ARIN',
      roles: ['abuse'],
      name: 'Abuse',
      organization: 'Abuse',
      phones: ['+1-650-253-0000'],
      emails: ['network-abuse@google.com'],
    });
    expect(r.contacts.find((c) => c.handle === 'ZG39-ARIN')?.roles).toEqual(['technical', 'administrative', 'noc', 'abuse']);
  });
});

describe('RIPE NCC', () => {
  test('62.239.237.1: "/32" suffixed addresses, registrant without a jCard gives no owner', () => {
    const r = norm('ipwhois-extracted-ripe-ip-62_239_237_1.json', '62.239.237.1');
    expect(r.network).toEqual({
      handle: '62.239.237.0 - 62.239.237.255',
      name: 'BT-CORPORATE',
      registry: 'ripencc',
      registered_owner: null,
      allocation: { cidr: '62.239.237.0/24', range: '62.239.237.0 - 62.239.237.255', registry: 'ripencc', country: 'GB' },
    });
    expect(r.contacts[0]).toEqual({
      handle: 'BTCR3-RIPE',
      roles: ['abuse'],
      name: 'BT Corporate Registry',
      emails: ['zzdnsr@bt.com', 'steve.a.marshall@bt.com', 'lee.bailey-hague@bt.com'],
    });
    // Entities referenced by handle only are still listed, named by their handle.
    expect(r.contacts.slice(1)).toEqual([
      { handle: 'BCER1-RIPE', roles: ['administrative', 'technical'], name: 'BCER1-RIPE' },
      { handle: 'BTENT-MNT', roles: ['registrant'], name: 'BTENT-MNT' },
      { handle: 'LBH1-RIPE', roles: ['administrative'], name: 'LBH1-RIPE' },
      { handle: 'SAM62-RIPE', roles: ['administrative'], name: 'SAM62-RIPE' },
      { handle: 'SW4727-RIPE', roles: ['administrative'], name: 'SW4727-RIPE' },
    ]);
  });

  test('2a00:2381:ffff::1: IPv6 "/128" suffixed addresses', () => {
    const r = norm('ipwhois-extracted-ripe-ip-2a00_2381_ffff_1.json', '2a00:2381:ffff::1');
    expect(r.network?.allocation).toEqual({
      cidr: '2a00:2381:ffff::/64',
      range: '2a00:2381:ffff:: - 2a00:2381:ffff:0:ffff:ffff:ffff:ffff',
      registry: 'ripencc',
      country: 'GB',
    });
    expect(r.network?.name).toBe('BT-WORLD-IPVSIX-LAUNCH');
    expect(r.network?.handle).toBe('2a00:2381:ffff::/64');
  });

  test('130.59.0.0/16 (SWITCH, legacy)', () => {
    const r = norm('whoisit-rdap_response_ip_v4_2.json', '130.59.31.80');
    expect(r.network).toEqual({
      handle: '130.59.0.0 - 130.59.255.255',
      name: 'SWITCH-LAN',
      registry: 'ripencc',
      registered_owner: null,
      allocation: { cidr: '130.59.0.0/16', range: '130.59.0.0 - 130.59.255.255', registry: 'ripencc', country: 'CH' },
    });
    // SWITCH-MNT appears at top level and nested under the abuse role: listed once.
    expect(r.contacts.map((c) => c.handle)).toEqual(['ORG-SG2-RIPE', 'RIPE-NCC-LEGACY-MNT', 'SNOC1-RIPE', 'SWITCH-MNT', 'AR31930-RIPE']);
    // The same address twice (types email and abuse) is one email.
    expect(r.contacts[4]).toEqual({ handle: 'AR31930-RIPE', roles: ['abuse'], name: 'Abuse-C Role', emails: ['abuse@switch.ch'] });
  });

  test('the RIPE error object is not a network', () => {
    expect(norm('icann-rdap-ripe-error.json', '62.239.237.1', 'ripencc')).toEqual({ available: false, network: null, contacts: [] });
  });
});

describe('APNIC', () => {
  test('210.107.73.73: no registrant role, so no owner; duplicate emails collapse', () => {
    const r = norm('ipwhois-extracted-apnic-ip-210_107_73_73.json', '210.107.73.73');
    expect(r.network).toEqual({
      handle: '210.107.0.0 - 210.107.127.255',
      name: 'BORANET-NET-210-107',
      registry: 'apnic',
      registered_owner: null,
      allocation: { cidr: '210.107.0.0/17', range: '210.107.0.0 - 210.107.127.255', registry: 'apnic', country: 'KR' },
    });
    expect(r.contacts).toEqual([
      {
        handle: 'DB50-AP',
        roles: ['technical', 'administrative'],
        name: 'DACOM BORANET',
        phones: ['+82-2-2089-7755', '+82-2-2089-0706'],
        emails: ['ipadm@nic.bora.net', 'abuse@bora.net', 'security@bora.net'],
      },
      { handle: 'IRT-KRNIC-KR', roles: ['abuse'], name: 'IRT-KRNIC-KR', emails: ['hostmaster@nic.or.kr'] },
    ]);
  });

  test('2001:240:10c:1::ca20:9d1d (IIJ via JPNIC)', () => {
    const r = norm('ipwhois-extracted-apnic-ip-2001_240_10c_1_ca20_9d1d.json', '2001:240:10c:1::ca20:9d1d');
    expect(r.network).toEqual({
      handle: '2001:0240::/32',
      name: 'IIJ-JPNIC-JP-20000308',
      registry: 'apnic',
      registered_owner: null,
      allocation: { cidr: '2001:240::/32', range: '2001:240:: - 2001:240:ffff:ffff:ffff:ffff:ffff:ffff', registry: 'apnic', country: 'JP' },
    });
    expect(r.contacts).toEqual([
      {
        handle: 'JNIC1-AP',
        roles: ['technical', 'administrative'],
        name: 'Japan Network Information Center',
        phones: ['+81-3-5297-2311', '+81-3-5297-2312'],
        emails: ['hostmaster@nic.ad.jp'],
      },
    ]);
  });

  test('1.1.1.0/24 (APNIC-LABS), cidr0 present', () => {
    const r = norm('whoisit-rdap_response_ip_v4.json', '1.1.1.1');
    expect(r.network).toEqual({
      handle: '1.1.1.0 - 1.1.1.255',
      name: 'APNIC-LABS',
      registry: 'apnic',
      registered_owner: null,
      allocation: { cidr: '1.1.1.0/24', range: '1.1.1.0 - 1.1.1.255', registry: 'apnic', country: 'AU' },
    });
    expect(r.contacts.map((c) => c.name)).toEqual(['IRT-APNICRANDNET-AU', 'APNIC RESEARCH']);
    expect(r.contacts[0].emails).toEqual(['helpdesk@apnic.net']);
  });
});

describe('LACNIC', () => {
  test('200.57.141.161: the registrant org is the owner, never the registrant person nested under it', () => {
    const r = norm('ipwhois-extracted-lacnic-ip-200_57_141_161.json', '200.57.141.161');
    expect(r.network).toEqual({
      handle: '200.57.141.161',
      name: 'Triara.com, S.A. de C.V.',
      registry: 'lacnic',
      registered_owner: 'Triara.com, S.A. de C.V.',
      // This (old) LACNIC answer describes only the queried address.
      allocation: { cidr: '200.57.141.161/32', range: '200.57.141.161 - 200.57.141.161', registry: 'lacnic', country: 'MX' },
    });
    expect(r.contacts).toEqual([
      {
        handle: 'RYT2',
        roles: ['administrative', 'technical', 'abuse', 'registrant'],
        name: 'Arturo Alejandro Rodriguez Garcia',
        organization: 'Triara.com, S.A. de C.V.',
        phones: ['52  8181962393'],
        emails: ['operacion.redes@TRIARA.COM'],
      },
      { handle: 'MX-TSCV6-LACNIC', roles: ['registrant'], name: 'Triara.com, S.A. de C.V.', phones: ['52  5554907261'] },
    ]);
  });

  test('2801:10:c000:: (expanded zero groups)', () => {
    const r = norm('ipwhois-extracted-lacnic-ip-2801_10_c000.json', '2801:10:c000::');
    expect(r.network).toEqual({
      handle: '2801:10:c000::',
      name: 'Universidad Catolica de Oriente',
      registry: 'lacnic',
      registered_owner: 'Universidad Catolica de Oriente',
      allocation: { cidr: '2801:10:c000::/128', range: '2801:10:c000:: - 2801:10:c000::', registry: 'lacnic', country: 'CO' },
    });
    expect(r.contacts[0].name).toBe('Juan Diego García Muñoz');
    expect(r.contacts[0].emails).toEqual(['sistemas.red@UCO.EDU.CO']);
  });
});

describe('AFRINIC', () => {
  test('196.11.239.0 - 196.11.246.255: not one prefix, so cidr is the piece holding the address', () => {
    const file = 'ipwhois-extracted-afrinic-ip-196_11_240_215.json';
    const r = norm(file, '196.11.240.215');
    expect(r.network).toEqual({
      handle: '196.11.239.0 - 196.11.246.255',
      name: 'ORG-VSA1-AFRINIC',
      registry: 'afrinic',
      // No roles in this answer, and the org's fn is only its handle: no owner name.
      registered_owner: null,
      allocation: { cidr: '196.11.240.0/22', range: '196.11.239.0 - 196.11.246.255', registry: 'afrinic', country: 'ZA' },
    });
    expect(norm(file, '196.11.239.7').network?.allocation.cidr).toBe('196.11.239.0/24');
    expect(norm(file, '196.11.246.1').network?.allocation.cidr).toBe('196.11.246.0/24');
    expect(norm(file).network?.allocation.cidr).toBeNull();
    // tel: URIs lose their scheme.
    expect(r.contacts).toEqual([
      { handle: 'MBIP-AFRINIC', roles: [], name: 'MTN Business IP Maintainer', emails: ['ip-maint@mtnbusiness.co.za'] },
      { handle: 'ORG-VSA1-AFRINIC', roles: [], name: 'ORG-VSA1-AFRINIC', phones: ['+27832125745'], emails: ['teixei_a@mtn.co.za'] },
    ]);
  });

  test('2001:43f8:7b0::/48 (TESPOK / KIXP)', () => {
    const r = norm('ipwhois-extracted-afrinic-ip-2001_43f8_7b0.json', '2001:43f8:7b0::');
    expect(r.network).toEqual({
      handle: '2001:43f8:07b0::/48',
      name: 'ORG-TA38-AFRINIC',
      registry: 'afrinic',
      registered_owner: null,
      allocation: { cidr: '2001:43f8:7b0::/48', range: '2001:43f8:7b0:: - 2001:43f8:7b0:ffff:ffff:ffff:ffff:ffff', registry: 'afrinic', country: 'KE' },
    });
    expect(r.contacts.map((c) => c.handle)).toEqual(['TT8-AFRINIC', 'ORG-TA38-AFRINIC', 'Bm35-AfriNIC']);
    expect(r.contacts[2]).toEqual({
      handle: 'Bm35-AfriNIC',
      roles: [],
      name: 'Barry macharia',
      phones: ['+25420245036', '+254204348200'],
      emails: ['barry@tespok.co.ke', 'support@tespok.co.ke'],
    });
  });
});

describe('objects that are not ip networks', () => {
  for (const file of [
    'icann-rdap-arin-autnum_16509.json',
    'icann-rdap-arin-entity_hostmaster.json',
    'ipwhois-tests-entity.json',
    'whoisit-rdap_response_asn.json',
    'whoisit-rdap_response_entity.json',
  ]) {
    test(file, () => {
      expect(norm(file, '1.2.3.4', 'arin')).toEqual({ available: false, network: null, contacts: [] });
    });
  }
  test('null, text, arrays', () => {
    for (const v of [null, 'ip network', [], 42]) expect(normalizeRdapNetwork(v, 'arin').available).toBe(false);
  });
});

describe('registry', () => {
  test('port43 names the registry that answered, over a wrong hint', () => {
    expect(norm('ipwhois-extracted-ripe-ip-62_239_237_1.json', undefined, 'arin').network?.registry).toBe('ripencc');
  });
  test('without port43, the self link names it; without either, the hint', () => {
    const json = readRdapFeed('whoisit-rdap_response_ip_v4.json') as Record<string, unknown>;
    delete json.port43;
    expect(normalizeRdapNetwork(json, 'lacnic').network?.registry).toBe('apnic');
    delete json.links;
    expect(normalizeRdapNetwork(json, 'lacnic').network?.registry).toBe('lacnic');
    expect(normalizeRdapNetwork(json, null).network?.allocation.registry).toBeNull();
  });
});

describe('parseRdapAddress', () => {
  test('undoes registry quirks and rejects non-addresses', () => {
    expect(parseRdapAddress('074.125.000.000')).toEqual({ family: 4, value: 74 * 2 ** 24 + 125 * 2 ** 16 });
    expect(parseRdapAddress('62.239.237.255/32')).toEqual({ family: 4, value: 62 * 2 ** 24 + 239 * 2 ** 16 + 237 * 256 + 255 });
    expect(parseRdapAddress('2001:4860:FFFF:0000:0000:0000:0000:0001')?.value).toBe(0x20014860ffff00000000000000000001n);
    expect(parseRdapAddress('256.1.1.1')).toBeNull();
    expect(parseRdapAddress('')).toBeNull();
    expect(parseRdapAddress(12)).toBeNull();
  });
});
