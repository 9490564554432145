/**
 * RDAP answers built to stall or bloat a worker, served by a real HTTP
 * server on 127.0.0.1 inside the client's 1 MiB body cap: tens of thousands
 * of e-mail entries in one card, and one handle repeated across hundreds of
 * entities. What is read from one answer is bounded (MAX_CARD_VALUES per
 * list, a bounded number of entities) and de-duplication is linear.
 */
import { afterEach, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { createRdapClient } from '../../src/rdap/client.ts';
import { RDAP_DEFAULTS } from '../../src/rdap/rdap-defaults.ts';
import { MAX_CARD_VALUES } from '../../src/rdap/jcard.ts';
import { startMockRdap, type MockRdapServer } from './rdap-feeds.ts';

const servers: MockRdapServer[] = [];
afterEach(() => {
  while (servers.length) servers.pop()!.stop();
});

const network = (entities: unknown[]) => ({
  objectClassName: 'ip network',
  handle: 'NET-HOSTILE',
  startAddress: '198.51.100.0',
  endAddress: '198.51.100.255',
  ipVersion: 'v4',
  name: 'HOSTILE',
  entities,
});

const emailProperty = (i: number) => ['email', {}, 'text', `u${i}@x.io`];

function serve(body: unknown): string {
  const text = JSON.stringify(body);
  // The shapes must stay inside the client's body cap, or they would be refused before parsing.
  expect(text.length).toBeLessThan(RDAP_DEFAULTS.maxBodyBytes);
  const mock = startMockRdap(() => new Response(text, { headers: { 'content-type': 'application/rdap+json' } }));
  servers.push(mock);
  return mock.base;
}

test('one card with 25 000 distinct e-mails keeps a bounded list', async () => {
  const emails = Array.from({ length: 25_000 }, (_, i) => emailProperty(i));
  const base = serve(network([{ handle: 'H1', roles: ['abuse'], vcardArray: ['vcard', [['fn', {}, 'text', 'Hostile'], ...emails]] }]));
  const t0 = performance.now();
  const result = await createRdapClient({ base }).lookup('198.51.100.7');
  console.log(`25 000 e-mail entries read in ${(performance.now() - t0).toFixed(0)} ms`);
  expect(result.available).toBe(true);
  expect(result.contacts).toHaveLength(1);
  const kept = result.contacts[0]!.emails!;
  expect(kept.length).toBeLessThanOrEqual(MAX_CARD_VALUES);
  expect(new Set(kept).size).toBe(kept.length);
  expect(kept[0]).toBe('u0@x.io');
});

test('one handle repeated over many entities merges into one bounded contact', async () => {
  const entities = Array.from({ length: 600 }, (_, e) => ({
    handle: 'SAME',
    roles: ['technical', `role${e % 7}`],
    vcardArray: ['vcard', [['fn', {}, 'text', 'Same'], ...Array.from({ length: 40 }, (_, i) => emailProperty(e * 40 + i))]],
  }));
  const base = serve(network(entities));
  const result = await createRdapClient({ base }).lookup('198.51.100.7');
  expect(result.contacts).toHaveLength(1);
  const contact = result.contacts[0]!;
  expect(contact.emails!.length).toBeLessThanOrEqual(MAX_CARD_VALUES);
  expect(new Set(contact.roles)).toEqual(new Set(['technical', ...Array.from({ length: 7 }, (_, i) => `role${i}`)]));
});

test('case-insensitive duplicates inside a card collapse, order kept', async () => {
  const card = ['vcard', [['fn', {}, 'text', 'Dup'], ['email', {}, 'text', 'A@x.example'], ['email', {}, 'text', 'a@X.example'], ['email', {}, 'text', 'b@x.example']]];
  const base = serve(network([{ handle: 'D', roles: ['abuse'], vcardArray: card }]));
  const result = await createRdapClient({ base }).lookup('198.51.100.7');
  expect(result.contacts[0]!.emails).toEqual(['A@x.example', 'b@x.example']);
});
