/**
 * The peeringdb-net network type through a build: resolved for the announcing
 * ASN (route origin, else the ASN range), stored in the record, and read by
 * scoring only where no range list speaks for the address.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import type { ResolvedSource } from '../../index-builder/manifest.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { DEFAULT_POLICY, assessRecord } from '../../src/scoring/index.ts';

const PEERINGDB = resolve(import.meta.dir, '../parsers/fixtures/peeringdb-net.json');
const dir = mkdtempSync(join(tmpdir(), 'ipintel-nettype-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function source(type: string, name: string, text: string | null, extra: Record<string, string> = {}): ResolvedSource {
  const absPath = text === null ? name : join(dir, name);
  if (text !== null) writeFileSync(absPath, text);
  return { options: { type, path: absPath, ...extra }, absPath, displayPath: name };
}

let reader: IndexReader;
beforeAll(async () => {
  const out = join(dir, 'nettype.idx');
  await buildIndex({
    quiet: true,
    out,
    sources: [
      source('asn-csv', 'asn.csv', [
        '20.0.0.0,20.0.255.255,64500,Example Cable', // Cable/DSL/ISP
        '20.1.0.0,20.1.255.255,64501,Example Transit', // NSP
        '20.2.0.0,20.2.255.255,64503,Example Corp', // Enterprise
        '20.3.0.0,20.3.255.255,64999,Not In PeeringDB',
        '20.4.0.0,20.4.255.255,64510,Example Undisclosed',
      ].join('\n') + '\n'),
      // Inside the cable ISP's ASN range, a /24 announced by the content network: the route origin speaks.
      source('pfx2as', 'routes.pfx2as', '20.0.0.0\t16\t64500\n20.0.9.0\t24\t64502\n'),
      source('cidr-list', 'vpn.txt', '20.0.5.0/24\n', { category: 'vpn', provider: 'Example VPN' }),
      source('cidr-list', 'relay.txt', '20.0.6.0/24\n', { category: 'privacy_relay', provider: 'iCloud Private Relay' }),
      source('cidr-list', 'dc.txt', '20.0.7.0/24\n', { category: 'datacenter' }),
      source('peeringdb-net', PEERINGDB, null),
    ],
  });
  reader = IndexReader.open(out);
}, 60_000);

const at = (ip: string) => {
  const hit = reader.lookup(ip)!;
  const a = assessRecord(hit.record, { verifiedCrawler: null }, DEFAULT_POLICY);
  return { record: hit.record, a };
};

describe('network type from peeringdb-net', () => {
  test('the build says it has network types', () => {
    expect(reader.meta.capabilities.network_type).toBe(true);
  });

  test('an address of a Cable/DSL/ISP network: usage isp, residential access ISP profile', () => {
    const { record, a } = at('20.0.1.1');
    expect(record.networkType).toBe('cable_dsl_isp');
    expect(a.classification).toMatchObject({ usage_type: 'isp', confidence: 'medium' });
    expect(a.network).toMatchObject({ category: 'residential', operator_type: 'isp', operator: 'Example Cable' });
    expect(a.decision).toMatchObject({ profile: 'residential', action: 'allow' });
  });

  test('range lists win over the ASN-level type', () => {
    expect(at('20.0.5.1').a.classification.usage_type).toBe('vpn');
    expect(at('20.0.6.1').a.classification.usage_type).toBe('privacy_relay');
    expect(at('20.0.7.1').a.classification.usage_type).toBe('hosting');
    // The type is still a fact of the record; it only does not speak over the list.
    expect(at('20.0.5.1').record.networkType).toBe('cable_dsl_isp');
    expect(at('20.0.5.1').a.decision.profile).toBe('vpn_provider');
  });

  test('the route origin is the announcing ASN', () => {
    const { record, a } = at('20.0.9.1');
    expect(record.networkType).toBe('content');
    expect(a.classification.usage_type).toBe('content_delivery');
    expect(a.decision.profile).toBe('infrastructure_service');
  });

  test('other declared types map to their own usage; no declared type means no usage and no residential guess', () => {
    expect(at('20.1.0.1').a.classification).toMatchObject({ usage_type: 'network_service', confidence: 'low' });
    expect(at('20.1.0.1').a.decision.profile).toBe('unknown');
    expect(at('20.2.0.1').a.network).toMatchObject({ category: 'business', operator_type: 'business' });
    for (const ip of ['20.3.0.1', '20.4.0.1']) {
      const { record, a } = at(ip);
      expect(record.networkType).toBeNull();
      expect(a.classification.usage_type).toBe('unknown');
      expect(a.network).toMatchObject({ category: null, operator_type: null });
      expect(a.decision).toMatchObject({ profile: 'unknown', action: 'allow', confidence: 'low' });
      expect(a.explanation.reason_chain.join('\n')).toContain('no network-type evidence');
    }
  });
});
