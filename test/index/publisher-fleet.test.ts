/**
 * One publisher feeds a fleet: a publisher process (IPINTEL_ROLE=publisher)
 * refreshes its feeds from a feed publisher (a real nginx on 127.0.0.1
 * serving small feed files in the publishers' formats), builds once and
 * publishes; a second nginx serves the publish folder; two pulling servers
 * serve what it built. One fetch of each feed, one build; the publisher
 * answers only /health, /metrics and /v1/data/status.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import { PUBLISHED_INDEX, PUBLISHED_MANIFEST } from '../../src/index/publish/publish.ts';
import type { PublishedManifest } from '../../src/index/publish/signed-manifest.ts';
import { writeSigningKeyPair } from '../../src/index/publish/signing-keys.ts';
import { writeTestCatalog } from '../feeds/publisher.ts';
import { NGINX, startNginx, type Nginx } from '../helpers/nginx.ts';
import { fixedTestPort } from '../helpers/fixed-port.ts';

const ROOT = resolve(import.meta.dir, '../..');
const runNginx = NGINX !== null || !!process.env.CI;
if (NGINX === null) console.log('publisher-fleet: skipped (nginx is not installed; .ci/run installs nginx-light)');
const TOR = 'tor/torbulkexitlist';
const CLOUDFLARE = 'cloud/cloudflare-ips-v4.txt';
const TOR_EXIT = '185.220.101.7';
const ADMIN = 'fleet-admin-token';

describe.if(runNginx)('a publisher and two pulling servers', () => {
  let work: string;
  let feeds: Nginx;
  let published: Nginx;
  const children: Bun.Subprocess[] = [];
  const logs: Record<string, string[]> = {};

  function spawn(name: string, env: Record<string, string>): Bun.Subprocess {
    const port = fixedTestPort();
    const lines: string[] = (logs[name] = []);
    const child = Bun.spawn(['bun', 'src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', IPINTEL_DB: ':memory:', IPINTEL_RATE_LIMITS: 'off', IPINTEL_ADMIN_TOKEN: ADMIN, ...env },
      stdout: 'ignore',
      stderr: 'pipe',
    });
    void (async () => {
      let rest = '';
      for await (const chunk of child.stderr as ReadableStream<Uint8Array>) {
        rest += new TextDecoder().decode(chunk);
        const parts = rest.split('\n');
        rest = parts.pop()!;
        lines.push(...parts);
      }
    })();
    (child as unknown as { port: number }).port = port;
    children.push(child);
    return child;
  }
  const urlOf = (c: Bun.Subprocess) => `http://127.0.0.1:${(c as unknown as { port: number }).port}`;

  async function eventually(check: () => Promise<boolean>, ms: number): Promise<boolean> {
    for (const end = Date.now() + ms; Date.now() < end; await Bun.sleep(250)) if (await check().catch(() => false)) return true;
    return false;
  }

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'ipintel-fleet-'));
    // The feed publisher's files, in the publishers' own formats.
    const feedRoot = join(work, 'feeds-origin');
    mkdirSync(join(feedRoot, 'tor'), { recursive: true });
    mkdirSync(join(feedRoot, 'cloud'), { recursive: true });
    const exits = Array.from({ length: 320 }, (_, i) => `185.220.${100 + (i >> 8)}.${i & 255}`);
    writeFileSync(join(feedRoot, TOR), `${exits.join('\n')}\n`);
    writeFileSync(join(feedRoot, CLOUDFLARE), ['173.245.48.0/20', '103.21.244.0/22', '103.22.200.0/22', '103.31.4.0/22', '141.101.64.0/18', '108.162.192.0/18', ''].join('\n'));
    feeds = await startNginx(feedRoot, join(work, 'nginx-feeds'));
    mkdirSync(join(work, 'pub'));
    published = await startNginx(join(work, 'pub'), join(work, 'nginx-pub'));
  }, 60_000);

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    await feeds?.stop().catch(() => {});
    await published?.stop().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  });

  test('one fetch of each feed and one build; both servers serve what the publisher built', async () => {
    const dir = join(work, 'publisher');
    mkdirSync(join(dir, 'tor'), { recursive: true });
    mkdirSync(join(dir, 'cloud'), { recursive: true });
    // The operator's manifest: the two catalog feeds (older copies, refreshed in place) and small location and ASN
    // files of its own, which stand in for the embedded default data and keep the build to seconds.
    const older = Array.from({ length: 310 }, (_, i) => `171.25.${193 + (i >> 8)}.${i & 255}`);
    writeFileSync(join(dir, TOR), `${older.join('\n')}\n`);
    writeFileSync(join(dir, CLOUDFLARE), ['173.245.48.0/20', '103.21.244.0/22', '103.22.200.0/22', '103.31.4.0/22', '141.101.64.0/18', ''].join('\n'));
    writeFileSync(join(dir, 'geo.csv'), '185.220.100.0,185.220.101.255,DE,Hesse,,Frankfurt am Main,,50.11,8.68,Europe/Berlin\n');
    writeFileSync(join(dir, 'asn.csv'), '185.220.100.0,185.220.101.255,208294,Relayon\n');
    writeFileSync(
      join(dir, 'feeds.json'),
      JSON.stringify({
        sources: [
          { type: 'tor-exits', path: TOR },
          { type: 'cidr-list', category: 'content', provider: 'Cloudflare', path: CLOUDFLARE },
          { type: 'geo-csv', path: 'geo.csv' },
          { type: 'asn-csv', path: 'asn.csv' },
        ],
      }),
    );
    const { loadManifest } = await import('../../index-builder/manifest.ts');
    await buildIndex({ sources: loadManifest(join(dir, 'feeds.json')), out: join(dir, 'ipintel.idx'), quiet: true });
    writeTestCatalog(join(dir, 'catalog.json'), [TOR, CLOUDFLARE], `${feeds.url}/`);
    const keys = writeSigningKeyPair(join(work, 'signing'));
    const pub = spawn('publisher', {
      IPINTEL_ROLE: 'publisher',
      IPINTEL_PUBLISH_DIR: join(work, 'pub'),
      IPINTEL_INDEX_SIGNING_KEY: keys.keyPath,
      IPINTEL_INDEX: join(dir, 'ipintel.idx'),
      IPINTEL_FEEDS_MANIFEST: join(dir, 'feeds.json'),
      IPINTEL_FEEDS_CATALOG: join(dir, 'catalog.json'),
    });
    const servers = ['one', 'two'].map((name) => {
      mkdirSync(join(work, name));
      return spawn(name, {
        IPINTEL_INDEX: join(work, name, 'ipintel.idx'),
        IPINTEL_INDEX_URL: `${published.url}/${PUBLISHED_INDEX}`,
        IPINTEL_INDEX_PUBKEY: keys.pubPath,
        IPINTEL_INDEX_POLL: '1s',
        IPINTEL_WORKERS: name === 'one' ? '2' : '1',
        IPINTEL_DB: join(work, name, 'accounts.sqlite'),
      });
    });
    const isTor = async (c: Bun.Subprocess) =>
      ((await (await fetch(`${urlOf(c)}/v1/ip/${TOR_EXIT}`)).json()) as { classification: { is_tor: boolean } }).classification.is_tor === true;
    for (const s of servers) {
      const served = await eventually(() => isTor(s), 120_000);
      if (!served) console.error(`logs: ${JSON.stringify(logs, null, 1)}\nfeed requests: ${(await feeds.requests()).join(', ')}`);
      expect(served).toBe(true);
    }

    expect(logs.publisher!.filter((l) => l.includes('feeds: building'))).toHaveLength(1);
    expect(logs.publisher!.filter((l) => /publisher: .* is published/.test(l)).length).toBe(2); // the first index, then the build
    const requested = await feeds.requests();
    const fetched = (path: string) => requested.filter((r) => r === `GET /${path} 200`).length;
    expect(fetched(TOR)).toBe(1);
    expect(fetched(CLOUDFLARE)).toBe(1);
    // The pulling servers fetched nothing from the feed publisher: every request there came from the publisher's refresher.
    expect(requested.filter((r) => !r.startsWith('GET / ')).length).toBe(2); // GET / is startNginx's readiness probe

    // The publisher is not an API.
    expect((await fetch(`${urlOf(pub)}/v1/ip/${TOR_EXIT}`)).status).toBe(404);
    expect((await fetch(`${urlOf(pub)}/health`)).status).toBe(200);
    expect((await fetch(`${urlOf(pub)}/v1/data/status`)).status).toBe(200);

    // What each way of pulling costs, as the publisher and the servers report it.
    const admin = { authorization: `Bearer ${ADMIN}` };
    const m = JSON.parse(readFileSync(join(work, 'pub', PUBLISHED_MANIFEST), 'utf8')) as PublishedManifest;
    expect(m.deltas).toHaveLength(1); // from the first version published
    type Status = { index: { publish?: unknown; pull?: { last_transfer: { method: string; downloaded_bytes: number; index_bytes: number } | null; downloaded_bytes: Record<string, number> } } };
    const publisherStatus = (await (await fetch(`${urlOf(pub)}/v1/data/status`, { headers: admin })).json()) as Status;
    expect(publisherStatus.index.publish).toEqual({
      file: m.file,
      built_at: m.built_at,
      sha256: m.sha256,
      full_bytes: m.size,
      compressed_bytes: m.compressed!.size,
      deltas: [{ from_sha256: m.deltas![0]!.from_sha256, bytes: m.deltas![0]!.size }],
    });
    const publisherMetrics = await (await fetch(`${urlOf(pub)}/metrics`, { headers: admin })).text();
    expect(publisherMetrics).toContain(`ipintel_publish_bytes{way="compressed",from=""} ${m.compressed!.size}`);
    for (const s of servers) {
      const pull = ((await (await fetch(`${urlOf(s)}/v1/data/status`, { headers: admin })).json()) as Status).index.pull!;
      // Each pulled twice: the first version (nothing held: compressed), then the build (by delta when it held the first).
      expect(['delta', 'compressed']).toContain(pull.last_transfer!.method);
      expect(pull.last_transfer!.index_bytes).toBe(m.size);
      expect(pull.downloaded_bytes.plain).toBe(0);
      expect(pull.downloaded_bytes.compressed).toBeGreaterThan(0);
      const text = await (await fetch(`${urlOf(s)}/metrics`, { headers: admin })).text();
      expect(text).toContain('ipintel_index_pull_downloaded_bytes{method="plain"} 0');
      expect(text).toMatch(/ipintel_index_pull_updates\{method="(delta|compressed)"\} [12]/);
    }
  }, 300_000);
});
