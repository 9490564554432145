/**
 * Issue 17: RDAP personal data never reaches anonymous answers. A loopback
 * RDAP server answers with registrants that are people (a vCard without
 * `kind`, one with `kind: individual`, an `org` vCard whose name carries an
 * e-mail or a phone); after a Pro `include=rdap_contacts` lookup the shared
 * answers of the same address are byte for byte what they were before. An
 * organization registrant (`kind: org`, or an RPSL `ORG-…` handle) does
 * become `network.owner`.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { findNeedles } from '../../src/rdap/contact-scan.ts';
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { startMockRdap, type MockRdapServer } from '../rdap/rdap-feeds.ts';
import { call, NO_LIMITS } from './support.ts';

type Card = [string, Record<string, unknown>, string, string][];

function vcard(props: Card): unknown[] {
  return ['vcard', [['version', {}, 'text', '4.0'], ...props]];
}

function entity(handle: string, roles: string[], props: Card, entities: unknown[] = []): Record<string, unknown> {
  return { objectClassName: 'entity', handle, roles, vcardArray: vcard(props), entities };
}

const abusePerson = entity('AB1-TEST', ['abuse'], [
  ['kind', {}, 'text', 'individual'],
  ['fn', {}, 'text', 'Petra Abusedesk'],
  ['email', {}, 'text', 'petra.abusedesk@example.org'],
  ['tel', { type: 'voice' }, 'uri', 'tel:+49-30-5550123'],
]);

/** A registry answer for one address whose only registrant is `registrant`. */
function network(ip: string, registrant: Record<string, unknown>): Record<string, unknown> {
  return {
    rdapConformance: ['rdap_level_0'],
    objectClassName: 'ip network',
    handle: `NET-${ip.replaceAll('.', '-')}-1`,
    name: 'TEST-NET',
    startAddress: ip.replace(/\.\d+$/, '.0'),
    endAddress: ip.replace(/\.\d+$/, '.255'),
    ipVersion: 'v4',
    country: 'DE',
    port43: 'whois.ripe.net',
    entities: [registrant, abusePerson],
  };
}

/** Each case: the address, its registrant, the people's data that must stay out of shared answers. */
const PERSON_CASES = {
  'registrant without kind (a person named in fn, with an e-mail)': {
    ip: '8.8.8.8',
    registrant: entity('JD1-TEST', ['registrant'], [
      ['fn', {}, 'text', 'Jane Doe <jane.doe@example.net>'],
      ['email', {}, 'text', 'jane.doe@example.net'],
    ]),
    personal: ['Jane Doe', 'jane.doe@example.net'],
  },
  'registrant without kind (a bare person name)': {
    ip: '9.9.9.9',
    registrant: entity('MM7-TEST', ['registrant'], [['fn', {}, 'text', 'Max Mustermann']]),
    personal: ['Max Mustermann'],
  },
  'registrant of kind individual (its org is the person again)': {
    ip: '1.1.1.1',
    registrant: entity('JR2-TEST', ['registrant'], [
      ['kind', {}, 'text', 'individual'],
      ['fn', {}, 'text', 'John Roe'],
      ['org', {}, 'text', 'John Roe Consulting'],
      ['email', {}, 'text', 'john@roe-consulting.example'],
    ]),
    personal: ['John Roe', 'john@roe-consulting.example'],
  },
  'an org vCard whose name is a person with an e-mail': {
    ip: '4.2.2.2',
    registrant: entity('ORG-ER1-RIPE', ['registrant'], [
      ['kind', {}, 'text', 'org'],
      ['fn', {}, 'text', 'Erika Rossi erika.rossi@example.it'],
    ]),
    personal: ['Erika Rossi', 'erika.rossi@example.it'],
  },
  'an org vCard whose name carries a phone number': {
    ip: '208.67.222.222',
    registrant: entity('HB3-TEST', ['registrant'], [
      ['kind', {}, 'text', 'org'],
      ['fn', {}, 'text', 'Hans Berger Tel. +43 660 1234567'],
    ]),
    personal: ['Hans Berger', '1234567'],
  },
} as const;

const ORG_CASES = {
  'registrant of kind org': {
    ip: '5.101.96.10',
    registrant: entity('EXNET', ['registrant'], [['kind', {}, 'text', 'org'], ['fn', {}, 'text', 'Example Networks GmbH']], [abusePerson]),
    owner: 'Example Networks GmbH',
  },
  'registrant without kind but with an RPSL organisation handle': {
    ip: '185.220.101.1',
    registrant: entity('ORG-EC9-RIPE', ['registrant'], [['fn', {}, 'text', 'Example Carrier B.V.']]),
    owner: 'Example Carrier B.V.',
  },
} as const;

const ANSWERS = new Map<string, Record<string, unknown>>(
  [...Object.values(PERSON_CASES), ...Object.values(ORG_CASES)].map((c) => [c.ip, network(c.ip, c.registrant)]),
);

let server: RunningServer;
let rdap: MockRdapServer;
let pro: string;
let free: string;

beforeAll(async () => {
  rdap = startMockRdap((url) => {
    const answer = ANSWERS.get(decodeURIComponent(url.pathname).replace(/^\/ip\//, ''));
    return answer
      ? Response.json(answer, { headers: { 'content-type': 'application/rdap+json' } })
      : Response.json({ errorCode: 404, title: 'Not Found' }, { status: 404 });
  });
  server = await startTestServer({ ...NO_LIMITS, IPINTEL_RDAP_BASE: rdap.base });
  pro = (await server.services.accounts.grantKeyByEmail('pro@example.com', 'pro', 'test')).created.secret;
  free = (await server.services.accounts.grantKeyByEmail('free@example.com', 'free', 'test')).created.secret;
}, 120_000);
afterAll(async () => {
  await server.stop();
  rdap.stop();
});

/** Every shared (non-Pro-include) answer about one address, as body text by request. */
async function sharedAnswers(ip: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [who, init] of [['anonymous', {}], ['free', { headers: { 'x-api-key': free } }], ['pro without include', { headers: { 'x-api-key': pro } }]] as const) {
    for (const path of [`/v1/ip/${ip}`, `/v1/ip/${ip}?fields=network`, `/${ip}`, `/${ip}?format=text&detail=1`, `/v1/assessment?ipv4=${ip}`]) {
      const a = await call(server.url, path, init);
      expect(a.status).toBe(200);
      out[`${who} ${path}`] = a.text;
    }
  }
  return out;
}

/** The Pro include lookup: it must carry the contacts and never be stored by shared caches. */
async function proLookup(ip: string): Promise<Record<string, any>> {
  const a = await call(server.url, `/v1/ip/${ip}?include=rdap_contacts`, { headers: { 'x-api-key': pro } });
  expect(a.status).toBe(200);
  expect(a.headers.get('cache-control')).toBe('no-store');
  const body = a.json();
  expect(body.rdap.available).toBe(true);
  return body;
}

describe('a person registrant never reaches a shared answer', () => {
  for (const [name, c] of Object.entries(PERSON_CASES)) {
    test(name, async () => {
      const before = await sharedAnswers(c.ip);
      const body = await proLookup(c.ip);
      // The Pro answer does hold the person: the scan below is looking for something real.
      expect(findNeedles(JSON.stringify(body.rdap.contacts), [...c.personal])).toEqual([...c.personal]);
      const after = await sharedAnswers(c.ip);
      for (const [request, text] of Object.entries(after)) {
        expect({ request, found: findNeedles(text, [...c.personal, 'petra.abusedesk@example.org', 'Petra Abusedesk']) }).toEqual({ request, found: [] });
      }
      // Nothing of the Pro lookup changed what everyone else is told.
      expect(after).toEqual(before);
      // Not in the Pro answer's owner fields either (the person stays in contacts only).
      expect(body.rdap.network.registered_owner).toBeNull();
      expect(findNeedles(JSON.stringify(body.network), [...c.personal])).toEqual([]);
    });
  }
});

describe('an organization registrant becomes network.owner', () => {
  for (const [name, c] of Object.entries(ORG_CASES)) {
    test(name, async () => {
      const body = await proLookup(c.ip);
      expect(body.rdap.network.registered_owner).toBe(c.owner);
      expect(body.network.owner).toBe(c.owner);
      const anonymous = await call(server.url, `/v1/ip/${c.ip}`);
      expect(anonymous.headers.get('cache-control')).toBe('public, max-age=86400');
      expect(anonymous.json().network.owner).toBe(c.owner);
      expect(findNeedles(anonymous.text, ['Petra Abusedesk', 'petra.abusedesk@example.org', '5550123'])).toEqual([]);
    });
  }
});
