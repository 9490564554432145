/**
 * Feed transport as hostile input, against a real publisher on 127.0.0.1
 * (`feeds update` in-process, and in a child for https): redirects leave
 * neither the configured origin nor public https, and no fetched byte
 * reaches a log line or the state file; a gzip bomb, a Content-Encoding
 * bomb, a 500 MB JSON feed, 10 M /128 lines and a 60 MB line stop at their
 * bounds with bounded memory (the peak RSS of this, the validating, process
 * is printed).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { addressVerdict, redirectScope, redirectVerdict } from '../../src/feeds/redirect-policy.ts';
import { isPublicAddress } from '../../src/net/ip.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';
import { gzipBomb, hostLines, hugeJson, streamed } from './hostile-bodies.ts';
import { countParses, GOOGLEBOT, HostileRig, RIS6, rowOf, SECRET, VPN6, type Run } from './hostile-kit.ts';

const rig = new HostileRig();
/** A second loopback server standing for a metadata service: it must never be asked. */
let metadata: ReturnType<typeof Bun.serve>;
let metadataHits = 0;

beforeAll(() => {
  rig.start();
  metadata = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch() {
      metadataHits++;
      return new Response(`{"AccessKeyId":"${SECRET}"}\n`);
    },
  });
});

afterAll(() => {
  metadata.stop(true);
  rig.stop();
});

describe('redirects', () => {
  const dir = () => join(rig.tmp, 'redirects');
  let catalog: string;

  beforeAll(() => {
    catalog = rig.writeCatalog('redirects.json', [GOOGLEBOT]);
  });

  const redirected = (location: string): Promise<Run> =>
    rig.serving(dir(), catalog, GOOGLEBOT, () => new Response(`moved, ${SECRET}`, { status: 302, headers: { location } }));

  const cases: Array<[string, () => string, RegExp]> = [
    ['to 127.0.0.1 on another port', () => `http://127.0.0.1:${metadata.port}/latest/meta-data/?k=${SECRET}`, /redirect refused: to a URL that is not https/],
    ['to 169.254.169.254', () => `http://169.254.169.254/latest/meta-data/iam/${SECRET}`, /redirect refused: to a URL that is not https/],
    ['to https on the same host name (a loopback address)', () => `https://127.0.0.1:${metadata.port}/${SECRET}`, /redirect refused: to a loopback, private, link-local or reserved address/],
    ['to https on another host', () => `https://metadata.example/${SECRET}`, /redirect refused: to a host other than the catalog entry's/],
  ];
  for (const [name, location, reason] of cases) {
    test(`${name}: refused, nothing fetched there, no fetched byte in the log or the state`, async () => {
      const hits = metadataHits;
      const run = await redirected(location());
      expect(run.code).toBe(1);
      expect(rowOf(run, GOOGLEBOT)).toMatch(reason);
      expect(metadataHits).toBe(hits);
      expect(run.log).not.toContain(SECRET);
      expect(run.state).not.toContain(SECRET);
      expect(run.state).not.toContain('169.254');
    });
  }

  test('a redirect within the configured origin is followed; a loop stops at 5', async () => {
    rig.mirror.overrides.set('crawlers/elsewhere.json', () => new Response(Bun.file(join(FIXTURE_FEEDS_DIR, GOOGLEBOT))));
    rig.mirror.overrides.set(GOOGLEBOT, () => new Response(null, { status: 301, headers: { location: '/crawlers/elsewhere.json' } }));
    try {
      expect(rowOf(await rig.update(dir(), catalog), GOOGLEBOT)).toMatch(/updated +315/);
      rig.mirror.overrides.set(GOOGLEBOT, () => new Response(null, { status: 302, headers: { location: `/${GOOGLEBOT}` } }));
      expect(rowOf(await rig.update(dir(), catalog), GOOGLEBOT)).toMatch(/redirect refused: more than 5 redirects/);
    } finally {
      rig.mirror.overrides.clear();
    }
  });

  test('a real https publisher: a redirect down to http is refused, one within its origin is followed (feeds update in a child trusting a test CA)', async () => {
    const openssl = Bun.which('openssl');
    if (!openssl) {
      if (process.env.CI === 'true') throw new Error('openssl is needed for the https publisher');
      console.log('skipped: no openssl to make the https publisher a certificate');
      return;
    }
    const tls = join(rig.tmp, 'tls');
    mkdirSync(tls, { recursive: true });
    const made = Bun.spawnSync([openssl, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(tls, 'key.pem'), '-out', join(tls, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1']);
    expect(made.exitCode).toBe(0);
    let plainHits = 0;
    const plain = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => (plainHits++, new Response(`${SECRET}\n`)) });
    const https = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      tls: { cert: Bun.file(join(tls, 'cert.pem')), key: Bun.file(join(tls, 'key.pem')) },
      fetch(req) {
        const path = new URL(req.url).pathname;
        if (path === '/down/googlebot.json') return new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${plain.port}/googlebot.json` } });
        if (path === '/moved/googlebot.json') return new Response(null, { status: 301, headers: { location: '/real/googlebot.json' } });
        if (path === '/real/googlebot.json') return new Response(Bun.file(join(FIXTURE_FEEDS_DIR, GOOGLEBOT)));
        return new Response('not found', { status: 404 });
      },
    });
    try {
      const run = async (from: string) => {
        const dir = join(rig.tmp, `tls-${from}`);
        const catalog = rig.writeCatalog(`tls-${from}.json`, [GOOGLEBOT], { [GOOGLEBOT]: { url: `https://127.0.0.1:${https.port}/${from}/googlebot.json` } });
        const child = Bun.spawn(['bun', join(import.meta.dir, '../../src/cli.ts'), 'feeds', 'update', '--dir', dir, '--catalog', catalog, '--index', join(dir, 'index.idx'), '--no-build'], {
          env: { ...process.env, NODE_EXTRA_CA_CERTS: join(tls, 'cert.pem'), IPINTEL_FEEDS_MIRROR: '' },
          stdout: 'pipe',
          stderr: 'pipe',
        });
        const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
        return { code: child.exitCode, log: out + err, state: readFileSync(join(dir, 'index.idx.feeds-state.json'), 'utf8') } as Run;
      };
      const down = await run('down');
      expect(down.code).toBe(1);
      expect(rowOf(down, GOOGLEBOT)).toMatch(/missing .*redirect refused: https to a plain-http URL$/);
      expect(plainHits).toBe(0);
      expect(down.log + down.state).not.toContain(SECRET);
      const moved = await run('moved');
      expect(moved.code).toBe(0);
      expect(rowOf(moved, GOOGLEBOT)).toMatch(/updated +315/);
    } finally {
      https.stop(true);
      plain.stop(true);
    }
  }, 60_000);

  test('only public unicast addresses: loopback, private, link-local, unique-local, CGNAT, mapped and reserved ones are refused, also behind a name', async () => {
    for (const a of ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888', '2a00:1450::1']) expect({ a, ok: isPublicAddress(a) }).toEqual({ a, ok: true });
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fc00::1', 'fd00:ec2::254', '::ffff:169.254.169.254', '2001:db8::1', '224.0.0.1', 'not-an-address']) {
      expect({ a, ok: isPublicAddress(a) }).toEqual({ a, ok: false });
    }
    expect(await addressVerdict('localhost')).toBe('redirect refused: to a loopback, private, link-local or reserved address');
    expect(await addressVerdict('[::1]')).toBe('redirect refused: to a loopback, private, link-local or reserved address');
    expect(await addressVerdict('169.254.169.254')).toBe('redirect refused: to a loopback, private, link-local or reserved address');
    expect(await addressVerdict('8.8.8.8')).toBeNull();
  });

  test('https -> http is refused even on the same host; https to the entry host or a named one is left to the address check', () => {
    const scope = redirectScope('https://www.gstatic.com/ipranges/goog.json', ['gstatic.example']);
    const from = new URL('https://www.gstatic.com/ipranges/goog.json');
    expect(redirectVerdict(from, new URL('http://www.gstatic.com/ipranges/goog.json'), scope)).toEqual({ refused: 'redirect refused: https to a plain-http URL' });
    expect(redirectVerdict(from, new URL('https://www.gstatic.com/other.json'), scope)).toEqual({ follow: 'configured-origin' });
    expect(redirectVerdict(from, new URL('https://gstatic.example/goog.json'), scope)).toEqual({ follow: 'after-address-check' });
    expect(redirectVerdict(from, new URL('https://169.254.169.254/'), scope)).toEqual({ refused: "redirect refused: to a host other than the catalog entry's" });
    expect(redirectVerdict(from, new URL('https://user:pw@gstatic.example/'), scope)).toEqual({ refused: 'redirect refused: URL with credentials' });
  });
});

describe('huge and compressed feeds stop at their bounds with bounded memory', () => {
  const dir = () => join(rig.tmp, 'huge');
  const measured: string[] = [];
  afterAll(() => console.log(`hostile feeds (peak RSS of the validating process, time):\n  ${measured.join('\n  ')}`));

  // A .gz copy is stored as served and inflated while it is parsed; a Content-Encoding is undone while it downloads.
  const bombs: Array<[string, string, string, Record<string, string>, RegExp]> = [
    // Comment lines of the RIS format: the parse skips them, the inflation bound is what stops the copy.
    ['a gzip bomb (10 MB -> 4.8 GB) in a .gz feed stops at its inflation bound', RIS6, '%', {}, /missing .*refused: decompresses to more than \d+ bytes \(the bound for this feed\)/],
    ['a Content-Encoding gzip bomb on a plain feed stops at the size bound, counted after decoding', VPN6, '#', { 'content-encoding': 'gzip' }, /missing .*larger than 67108864 bytes/],
  ];
  for (const [name, path, comment, headers, outcome] of bombs) {
    test(name, async () => {
      const catalog = rig.writeCatalog(`bomb-${comment === '%' ? 'gz' : 'encoding'}.json`, [path], { [path]: { minRows: 1 } });
      const bomb = gzipBomb(10_000_000, comment);
      rig.mirror.overrides.set(path, () => bomb.response(headers));
      try {
        const { result: run, peakMb, seconds } = await rig.updateMeasured(dir(), catalog);
        measured.push(`${headers['content-encoding'] ? 'Content-Encoding' : 'gzip'} bomb ${Math.round(bomb.wireBytes / 1e6)} MB -> ${Math.round(bomb.inflatedBytes / 1e9)} GB: peak ${peakMb} MB, ${seconds} s`);
        expect(rowOf(run, path)).toMatch(outcome);
        expect(peakMb).toBeLessThan(300);
      } finally {
        rig.mirror.overrides.clear();
      }
    }, 120_000);
  }

  test('a 500 MB JSON feed is refused at its type bound before any parse', async () => {
    const catalog = rig.writeCatalog('json.json', [GOOGLEBOT]);
    const json = hugeJson(500e6);
    rig.mirror.overrides.set(GOOGLEBOT, () => json.response());
    const parses = countParses('crawler-ranges');
    try {
      // In this process, where the parser table is watched: refused before any parse.
      const here = await rig.update(dir(), catalog);
      expect(rowOf(here, GOOGLEBOT)).toMatch(/missing .*larger than 8388608 bytes/);
      expect(parses.count()).toBe(0);
      // As a process of its own, for its memory.
      const { result: run, peakMb, seconds } = await rig.updateMeasured(dir(), catalog);
      measured.push(`JSON 500 MB: peak ${peakMb} MB, ${seconds} s, stopped after ${json.sent()} of ${json.chunks} chunks`);
      expect(rowOf(run, GOOGLEBOT)).toMatch(/missing .*larger than 8388608 bytes/);
      expect(json.sent()).toBeLessThan(json.chunks / 10);
      expect(peakMb).toBeLessThan(300);
    } finally {
      parses.restore();
      rig.mirror.overrides.clear();
    }
  }, 120_000);

  test('a list of 10 M /128 lines: refused at the download bound; with the bound raised, the streamed parse stops at the range bound', async () => {
    const lines = hostLines(10_000_000);
    rig.mirror.overrides.set(VPN6, () => lines.response());
    try {
      const a = await rig.updateMeasured(dir(), rig.writeCatalog('lines.json', [VPN6]));
      measured.push(`10 M /128 lines, default bound: peak ${a.peakMb} MB, ${a.seconds} s, ${lines.sent()} lines sent`);
      expect(rowOf(a.result, VPN6)).toMatch(/missing .*larger than 67108864 bytes/);
      expect(a.peakMb).toBeLessThan(300);

      const b = await rig.updateMeasured(dir(), rig.writeCatalog('lines-big.json', [VPN6], { [VPN6]: { maxMb: 1024 } }));
      measured.push(`10 M /128 lines, maxMb 1024 (streamed parse): peak ${b.peakMb} MB, ${b.seconds} s`);
      expect(rowOf(b.result, VPN6)).toMatch(/missing .*refused: more than 2000000 ranges \(the bound for cidr-list\)/);
      expect(b.peakMb).toBeLessThan(300);
    } finally {
      rig.mirror.overrides.clear();
    }
  }, 300_000);

  test('a line longer than 64 KiB is refused without holding it', async () => {
    const catalog = rig.writeCatalog('longline.json', [VPN6]);
    const chunk = new Uint8Array(1 << 20).fill(0x41);
    rig.mirror.overrides.set(VPN6, () => {
      let sent = 0;
      return streamed(() => (sent++ < 60 ? chunk : null));
    });
    try {
      const run = await rig.update(dir(), catalog);
      expect(rowOf(run, VPN6)).toMatch(/refused: a line longer than 65536 bytes \(line 1\)/);
    } finally {
      rig.mirror.overrides.clear();
    }
  }, 60_000);
});

