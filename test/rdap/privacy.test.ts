/**
 * Pro answers carry RDAP contacts; free and anonymous answers carry at most the
 * registrant organization and allocation. Whole bodies are scanned for every
 * email, phone, street address, person name and raw RDAP key of the real
 * registry answers, served by a real loopback RDAP server.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { createRdapClient } from '../../src/rdap/client.ts';
import {
  containsRawRdapContactData,
  containsRdapContactData,
  findNeedles,
  rawRdapContactNeedles,
  rdapContactNeedles,
} from '../../src/rdap/contact-scan.ts';
import { allocationFromRdap, ownerFromRdap, publicRdap } from '../../src/rdap/redact.ts';
import type { RdapResult } from '../../src/rdap/types.ts';
import { FEED_FOR_IP, readRdapFeed, startMockRdap, type MockRdapServer } from './rdap-feeds.ts';

let mock: MockRdapServer;
const results = new Map<string, RdapResult>();

beforeAll(async () => {
  mock = startMockRdap();
  const client = createRdapClient({ base: mock.base });
  for (const ip of Object.keys(FEED_FOR_IP)) results.set(ip, await client.lookup(ip));
});
afterAll(() => mock.stop());

/** What a Pro lookup with include=rdap_contacts adds. */
const proBody = (ip: string, r: RdapResult) => JSON.stringify({ ip, network: { owner: ownerFromRdap(r), allocation: allocationFromRdap(r) }, rdap: r });
/** What a free or anonymous lookup may carry from RDAP. */
const freeBody = (ip: string, r: RdapResult) => JSON.stringify({ ip, network: { owner: ownerFromRdap(r), allocation: allocationFromRdap(r) } });

describe.each(Object.entries(FEED_FOR_IP))('%s', (ip, file) => {
  test('the Pro body has the contacts, and the scan finds them', () => {
    const r = results.get(ip)!;
    expect(r.available).toBe(true);
    expect(r.contacts.some((c) => (c.emails ?? []).length > 0)).toBe(true);
    const body = proBody(ip, r);
    expect(containsRdapContactData(body, r)).toBe(true);
    expect(containsRawRdapContactData(body, readRdapFeed(file))).toBe(true);
    for (const email of r.contacts.flatMap((c) => c.emails ?? [])) expect(body).toContain(email);
  });

  test('the free body has no contact data at all', () => {
    const r = results.get(ip)!;
    const body = freeBody(ip, r);
    expect(findNeedles(body, rdapContactNeedles(r))).toEqual([]);
    expect(findNeedles(body, rawRdapContactNeedles(readRdapFeed(file)))).toEqual([]);
    expect(body).not.toContain('@');
  });

  test('publicRdap keeps the network and drops every contact', () => {
    const r = results.get(ip)!;
    const pub = publicRdap(r);
    expect(pub).toEqual({ available: true, network: r.network, contacts: [] });
    const body = JSON.stringify({ ip, rdap: pub });
    expect(containsRdapContactData(body, r)).toBe(false);
    expect(containsRawRdapContactData(body, readRdapFeed(file))).toBe(false);
  });

  test('raw RDAP in a body is caught', () => {
    const raw = JSON.stringify(readRdapFeed(file));
    expect(containsRawRdapContactData(raw, readRdapFeed(file))).toBe(true);
    expect(containsRdapContactData(raw, results.get(ip)!)).toBe(true);
  });
});

describe('what counts as contact data', () => {
  test('a registrant person is a needle; the registrant organization is not', () => {
    const r = results.get('200.57.141.161')!;
    expect(ownerFromRdap(r)).toBe('Triara.com, S.A. de C.V.');
    expect(rdapContactNeedles(r)).toContain('Arturo Alejandro Rodriguez Garcia');
    expect(rdapContactNeedles(r)).not.toContain('Triara.com, S.A. de C.V.');
    expect(rdapContactNeedles(r)).toContain('operacion.redes@TRIARA.COM');
  });

  test('phones are found in their digits-only form too', () => {
    const r = results.get('192.198.0.0')!;
    expect(containsRdapContactData('{"note":"call 15074174176"}', r)).toBe(true);
    expect(containsRdapContactData('{"note":"+1-507-417-4176"}', r)).toBe(true);
  });

  test('street addresses and person names of the raw answer are needles; city and country alone are not', () => {
    const raw = readRdapFeed(FEED_FOR_IP['74.125.225.229']);
    expect(containsRawRdapContactData('{"location":{"city":"Mountain View","country":"United States"}}', raw)).toBe(false);
    expect(containsRawRdapContactData('{"x":"1600 Amphitheatre Parkway"}', raw)).toBe(true);
    const arin = readRdapFeed(FEED_FOR_IP['192.198.0.0']);
    expect(rawRdapContactNeedles(arin)).toEqual(
      expect.arrayContaining(['Daniel Petsinger', 'daniel.petsinger@radiolinkinternet.com', '+1-507-417-4176', '8162 SW 81st St', '8162 Sw 81st ST']),
    );
    // Matching is case-insensitive, so both spellings of the street are found either way.
    expect(containsRawRdapContactData('"8162 sw 81st st"', arin)).toBe(true);
  });

  test('the name of an entity without kind is a needle, unless its handle is an organisation handle', () => {
    const card = (fn: string) => ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', fn]]];
    const raw = {
      objectClassName: 'ip network',
      entities: [
        { handle: 'JD1-TEST', roles: ['registrant'], vcardArray: card('Jane Doe') },
        { handle: 'ORG-EC9-RIPE', roles: ['registrant'], vcardArray: card('Example Carrier B.V.') },
      ],
    };
    expect(rawRdapContactNeedles(raw)).toContain('Jane Doe');
    expect(rawRdapContactNeedles(raw)).not.toContain('Example Carrier B.V.');
  });

  test('an unavailable result gives no owner, no allocation and no contacts', () => {
    const none: RdapResult = { available: false, network: null, contacts: [] };
    expect(ownerFromRdap(none)).toBeNull();
    expect(allocationFromRdap(none)).toBeNull();
    expect(publicRdap(none)).toEqual(none);
    expect(rdapContactNeedles(none)).toEqual([]);
  });
});
