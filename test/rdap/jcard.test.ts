/** readJCard on real registry jCards and on RFC 7095 forms the feeds do not show. */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { readJCard } from '../../src/rdap/jcard.ts';
import { readRdapFeed } from './rdap-feeds.ts';

type Entity = { handle: string; vcardArray: unknown; entities?: Entity[] };
const entitiesOf = (file: string) => (readRdapFeed(file) as { entities: Entity[] }).entities;

test('ARIN person: kind, fn, phone, email and the address label lines', () => {
  const petsi = entitiesOf('icann-rdap-arin-network_192_198_0_0.json')[1];
  expect(readJCard(petsi.vcardArray)).toEqual({
    kind: 'individual',
    fn: 'Daniel Petsinger',
    org: null,
    emails: ['daniel.petsinger@radiolinkinternet.com'],
    phones: ['+1-507-417-4176'],
    addressLines: ['8162 Sw 81st ST', 'Ellendale', 'MN', '56026', 'United States'],
  });
});

test('APNIC labels with a literal backslash-n are split into lines', () => {
  const db50 = entitiesOf('ipwhois-extracted-apnic-ip-210_107_73_73.json')[0];
  expect(readJCard(db50.vcardArray).addressLines).toEqual(['DACOM Bldg., 706-1, Yoeksam-dong, Kangnam-ku', 'Seoul']);
});

test('AFRINIC tel: URIs and structured adr values', () => {
  const org = entitiesOf('ipwhois-extracted-afrinic-ip-196_11_240_215.json')[1];
  expect(readJCard(org.vcardArray)).toEqual({
    kind: 'org',
    fn: 'ORG-VSA1-AFRINIC',
    org: null,
    emails: ['teixei_a@mtn.co.za'],
    phones: ['+27832125745'],
    addressLines: ['216 14th Avenue', 'Fairland', 'Johannesburg 2196'],
  });
});

test('repeated emails collapse case-insensitively (APNIC pref duplicate)', () => {
  const irt = entitiesOf('ipwhois-extracted-apnic-ip-210_107_73_73.json')[1];
  expect(readJCard(irt.vcardArray).emails).toEqual(['hostmaster@nic.or.kr']);
});

test('structured org, multi-valued and upper-case property names', () => {
  const card = [
    'vcard',
    [
      ['version', {}, 'text', '4.0'],
      ['FN', {}, 'text', 'Example NOC'],
      ['org', {}, 'text', ['Example Inc.', 'Network Operations']],
      ['EMAIL', {}, 'text', 'noc@example.net', 'NOC@example.net'],
      ['tel', { type: ['work', 'voice'] }, 'uri', 'tel:+1-555-555-0100;ext=102'],
      ['kind', {}, 'text', 'Group'],
    ],
  ];
  expect(readJCard(card)).toEqual({
    kind: 'group',
    fn: 'Example NOC',
    org: 'Example Inc., Network Operations',
    emails: ['noc@example.net'],
    phones: ['+1-555-555-0100;ext=102'],
    addressLines: [],
  });
});

test('anything that is not a jCard reads as empty', () => {
  const empty = { kind: null, fn: null, org: null, emails: [], phones: [], addressLines: [] };
  for (const v of [undefined, null, 'vcard', ['vcard'], ['vcard', [['fn']]], ['other', []]]) expect(readJCard(v)).toEqual(empty);
});
