/**
 * The publisher speaks first, on the index of every real snapshot
 * (../shared/feeds/feeds.json): each precedence rule of docs/signals.md
 * checked over the published ranges it is about, not over a hand-picked
 * address. Each test first checks that the overlap it is about exists in the
 * feeds, so it cannot pass vacuously.
 */
import { beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { readAws } from '../../index-builder/parsers/cloud-aws.ts';
import { crawlerFamily } from '../../src/crawlers/registry.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { buildV1 } from '../../src/lookup/v1.ts';
import { formatIPv4, parseCidr } from '../../src/net/ip.ts';
import { DEFAULT_POLICY } from '../../src/scoring/index.ts';
import { fullIndexPath } from '../helpers/full-index.ts';
import { FEEDS_DIR } from '../helpers/recording-sink.ts';
import { describeWithShared } from '../helpers/shared-feeds.ts';

describeWithShared('precedence on the real snapshots', () => {
  let reader: IndexReader;
  beforeAll(async () => {
    reader = IndexReader.open(await fullIndexPath());
  }, 300_000);

  const text = (path: string) => {
    const buf = readFileSync(`${FEEDS_DIR}/${path}`);
    return (path.endsWith('.gz') ? gunzipSync(buf) : buf).toString('utf8');
  };
  type V4Range = [start: number, end: number];

  /** IPv4 ranges of every CIDR written in a text (one a line or inside JSON strings). */
  function v4Ranges(body: string): V4Range[] {
    const out: V4Range[] = [];
    for (const m of body.matchAll(/\b\d{1,3}(?:\.\d{1,3}){3}\/\d{1,2}\b/g)) {
      const c = parseCidr(m[0]);
      if (c?.family === 4) out.push([c.start as number, c.end as number]);
    }
    return out;
  }

  /** Membership tests against the union of `ranges` (sorted and merged once, then binary search). */
  function union(ranges: V4Range[]) {
    const merged: V4Range[] = [];
    for (const [s, e] of [...ranges].sort((a, b) => a[0] - b[0])) {
      const last = merged[merged.length - 1];
      if (last && s <= last[1] + 1) last[1] = Math.max(last[1], e);
      else merged.push([s, e]);
    }
    /** The merged range holding x, or undefined. */
    const at = (x: number) => {
      let lo = 0;
      let hi = merged.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (merged[mid][1] < x) lo = mid + 1;
        else if (merged[mid][0] > x) hi = mid - 1;
        else return merged[mid];
      }
      return undefined;
    };
    return {
      /** `r` lies wholly inside the union. */
      covers: (r: V4Range) => (at(r[0])?.[1] ?? -1) >= r[1],
      /** `r` shares an address with the union. */
      meets: (r: V4Range) => merged.some(([s, e]) => s <= r[1] && r[0] <= e),
    };
  }

  const NO_PROOF = { scoring: { verifiedCrawler: null }, policy: DEFAULT_POLICY };
  /** The v1 answer for an IPv4 number. */
  const answer = (x: number) => buildV1(reader.lookup(formatIPv4(x))!, NO_PROOF, null) as Record<string, any>;

  /** GitHub meta sections' IPv4 ranges. */
  function githubSection(name: string): V4Range[] {
    const meta = JSON.parse(text('cloud/github-meta.json')) as Record<string, unknown>;
    return v4Ranges(JSON.stringify(meta[name] ?? []));
  }

  const CRAWLER_SOURCES = (JSON.parse(text('feeds.json')).sources as Array<Record<string, string>>).filter((s) => s.type === 'crawler-ranges');

  describe("the publisher speaks first (real snapshots)", () => {
    test('iCloud Private Relay egress inside the combined third-party VPN list is relay egress, not VPN, and never challenged or blocked', () => {
      const relay = v4Ranges(text('relay/derived-x4bnet-apple-private-relay-ips.txt'));
      const vpn = union(v4Ranges(text('vpn/x4bnet-vpn-ipv4.txt')));
      const overlapping = relay.filter((r) => vpn.covers(r));
      expect(overlapping.length).toBeGreaterThan(relay.length * 0.9);
      const wrong: string[] = [];
      for (const r of overlapping) {
        const o = answer(r[0]);
        const c = o.classification;
        const ok = c.is_privacy_relay && !c.is_vpn && c.usage_type === 'privacy_relay' && c.proxy_type === 'privacy_relay';
        const gentle = !['block', 'challenge'].includes(o.score.verdict) && !['block', 'challenge'].includes(o.decision.action);
        if (!ok || !gentle || o.network.operator !== 'iCloud Private Relay') wrong.push(`${formatIPv4(r[0])}: ${c.usage_type} vpn=${c.is_vpn} ${o.score.verdict}/${o.decision.action} ${o.network.operator}`);
      }
      expect(wrong.slice(0, 5)).toEqual([]);
    });

    test('relay egress on the combined third-party datacenter list is not a hosting address', () => {
      const relay = v4Ranges(text('relay/derived-x4bnet-apple-private-relay-ips.txt'));
      const hosting = union(v4Ranges(text('cloud/x4bnet-datacenter-ipv4.txt')));
      const listed = relay.filter((r) => hosting.covers(r));
      expect(listed.length).toBeGreaterThan(100);
      const wrong = listed.map((r) => answer(r[0])).filter((o) => o.classification.is_datacenter || o.classification.traits.includes('hosting'));
      expect(wrong.map((o) => o.ip).slice(0, 5)).toEqual([]);
    });

    test("Google's own ranges (goog.json, outside Google Cloud) on the combined datacenter list are Google's content edge, not generic hosting", () => {
      const goog = v4Ranges(text('cloud/google-goog.json'));
      const cloud = union(v4Ranges(text('cloud/google-cloud.json')));
      const hosting = union(v4Ranges(text('cloud/x4bnet-datacenter-ipv4.txt')));
      // Only ranges no cloud list claims: a cloud's own hosting claim stands.
      const listed = goog.filter((r) => hosting.covers(r) && !cloud.meets(r));
      expect(listed.length).toBeGreaterThan(0);
      expect(listed.some((r) => r[0] <= 0x08080808 && 0x08080808 <= r[1])).toBe(true); // 8.8.8.0/24 is among them
      // An official crawler range inside them (Googlebot) answers as the crawler, which outranks content.
      const wrong = listed.map((r) => answer(r[0])).filter((o) => o.classification.is_datacenter || !['content_delivery', 'crawler'].includes(o.classification.usage_type));
      expect(wrong.map((o) => `${o.ip} ${o.classification.usage_type}`).slice(0, 5)).toEqual([]);
      expect(answer(0x08080808).network.operator).toBe('Google');
    });

    test("Azure addresses in GitHub's Actions list name Microsoft Azure as the operator; GitHub shows as the service", () => {
      const azure = union(v4Ranges(text('cloud/azure-ServiceTags_Public.json.gz')));
      const actions = githubSection('actions').filter((r) => azure.covers(r));
      expect(actions.length).toBeGreaterThan(1000);
      const wrong: string[] = [];
      let tenantShown = 0;
      for (const r of actions) {
        const hit = reader.lookup(formatIPv4(r[0]))!;
        if (hit.record.crawler !== null) continue; // a crawler's owner outranks the cloud (next test)
        const n = answer(r[0]).network;
        if (n.operator !== 'Microsoft Azure') wrong.push(`${formatIPv4(r[0])}: ${n.operator} (${n.service_name})`);
        if (n.service_name === 'GitHub actions') tenantShown++;
      }
      expect(wrong.slice(0, 5)).toEqual([]);
      expect(tenantShown).toBeGreaterThan(actions.length / 2);
    });

    test("Datadog's webhook and synthetics egress inside AWS: AWS is the operator, Datadog's more specific claim the service", () => {
      const aws = union(v4Ranges(text('cloud/aws-ip-ranges.json')));
      const datadog = JSON.parse(text('cloud/datadog-ip-ranges.json')) as Record<string, { prefixes_ipv4?: string[] }>;
      let checked = 0;
      for (const section of ['webhooks', 'synthetics']) {
        for (const r of v4Ranges(JSON.stringify(datadog[section]?.prefixes_ipv4 ?? [])).filter((x) => aws.covers(x))) {
          expect({ ip: formatIPv4(r[0]), ...answer(r[0]).network }).toMatchObject({ ip: formatIPv4(r[0]), operator: 'Amazon Web Services', service_name: `Datadog ${section}` });
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(50);
    });

    test("GitHub's own ranges outside any cloud stay GitHub's", () => {
      const clouds = union([
        ...v4Ranges(text('cloud/azure-ServiceTags_Public.json.gz')),
        ...v4Ranges(text('cloud/aws-ip-ranges.json')),
        ...v4Ranges(text('cloud/google-cloud.json')),
        ...v4Ranges(text('cloud/oracle-public_ip_ranges.json')),
      ]);
      const hooks = githubSection('hooks').filter((r) => !clouds.meets(r));
      expect(hooks.length).toBeGreaterThan(0);
      for (const r of hooks) expect(answer(r[0]).network).toMatchObject({ operator: 'GitHub', service_name: 'hooks', category: 'webhook' });
    });

    test.each(CRAWLER_SOURCES.map((s) => [s.crawler, s.path]))("every %s range names the crawler's owner as the operator, whatever cloud it runs in", (key, path) => {
      const owner = crawlerFamily(key)?.provider;
      expect(owner).toBeTruthy();
      const ranges = v4Ranges(text(path));
      expect(ranges.length).toBeGreaterThan(0);
      const wrong: string[] = [];
      for (const r of ranges) {
        const hit = reader.lookup(formatIPv4(r[0]))!;
        // A range several crawler feeds list (Google's) is answered by the one key the index holds for it.
        const expected = crawlerFamily(hit.record.crawler)?.provider;
        const n = answer(r[0]).network;
        if (n.operator !== expected || hit.record.crawler === null) wrong.push(`${formatIPv4(r[0])}: ${n.operator}, ${hit.record.crawler}`);
      }
      expect(wrong.slice(0, 5)).toEqual([]);
    });

    test('Bingbot and GPTBot ranges inside Azure: Microsoft and OpenAI, not GitHub or Azure', () => {
      const azure = union(v4Ranges(text('cloud/azure-ServiceTags_Public.json.gz')));
      for (const [path, owner] of [['crawlers/bingbot.json', 'Microsoft'], ['crawlers/gptbot.json', 'OpenAI']]) {
        const inAzure = v4Ranges(text(path)).filter((r) => azure.covers(r));
        expect(inAzure.length).toBeGreaterThan(5);
        for (const r of inAzure) {
          // OpenAI lists some ranges for several of its crawlers; the index keeps one key per range.
          const key = reader.lookup(formatIPv4(r[0]))!.record.crawler;
          expect(answer(r[0]).network).toMatchObject({ operator: owner, service_name: key, category: 'crawler' });
        }
      }
    });

    test('more specific beats less specific: an AWS prefix inside a broader AWS prefix answers with its own service and region', () => {
      const entries = readAws(JSON.parse(text('cloud/aws-ip-ranges.json')));
      const v4 = entries.flatMap((e) => {
        const c = typeof e.prefix === 'string' ? parseCidr(e.prefix) : null;
        return c?.family === 4 ? [{ start: c.start as number, end: c.end as number, service: e.service, region: e.region }] : [];
      });
      let nested = 0;
      for (const inner of v4) {
        const outer = v4.find((o) => o !== inner && o.start <= inner.start && inner.end <= o.end && o.end - o.start > inner.end - inner.start && (o.service !== inner.service || o.region !== inner.region));
        if (!outer) continue;
        // The narrowest published prefix holding the address speaks for it.
        const narrowest = v4.filter((o) => o.start <= inner.start && inner.start <= o.end).sort((a, b) => a.end - a.start - (b.end - b.start))[0];
        const hit = reader.lookup(formatIPv4(inner.start))!;
        if (hit.record.crawler !== null) continue;
        nested++;
        expect({ ip: formatIPv4(inner.start), service: hit.record.provider?.service ?? null, region: hit.record.provider?.region ?? null }).toEqual({
          ip: formatIPv4(inner.start),
          service: narrowest.service ?? null,
          region: narrowest.region ?? null,
        });
        if (nested >= 200) break;
      }
      expect(nested).toBeGreaterThan(20);
    });
  });
});
