/**
 * Feeds as hostile input, against a real publisher on 127.0.0.1 (`feeds
 * update` in-process): poisoned third-party lists (/0, ::/0, a /4, too much
 * of the announced space, a coverage jump, a shrink) are refused with their
 * reason and the previous copy kept, `--accept` takes a large change;
 * redirects leave neither the configured origin nor public https, and no
 * fetched byte reaches a log line or the state file; a gzip bomb, a 500 MB
 * JSON feed and a 10 M-line list stop at their bounds with bounded memory;
 * an unchanged feed parses nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/commands/feeds/cli.ts';
import { addressVerdict, isPublicAddress, redirectScope, redirectVerdict } from '../../src/feeds/redirect-policy.ts';
import { FEEDS_DIR } from '../helpers/recording-sink.ts';
import { PARSERS } from '../../index-builder/parsers/index.ts';
import { startFeedMirror, type FeedMirror } from '../ship/feed-mirror.ts';
import { gzipBomb, hostLines, hugeJson, streamed } from './hostile-bodies.ts';

const VPN = 'vpn/x4bnet-vpn-ipv4.txt';
const VPN6 = 'vpn/x4bnet-vpn-ipv6.txt';
const GOOGLEBOT = 'crawlers/googlebot.json';
const RIS6 = 'routing/riswhoisdump.IPv6.gz';
/** A string the hostile publisher plants in what it sends: it must appear in no log line and no state file. */
const SECRET = 'AKIA-LEAKED-SECRET-7f3c';

let tmp: string;
let mirror: FeedMirror;
/** A second loopback server standing for a metadata service: it must never be asked. */
let metadata: ReturnType<typeof Bun.serve>;
let metadataHits = 0;

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'ipintel-hostile-'));
  mirror = startFeedMirror();
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
  mirror.stop();
  metadata.stop(true);
  rmSync(tmp, { recursive: true, force: true });
});

/** A catalog of the real entries for `paths`, with `patch` applied per path (a test's own bounds). */
function writeCatalog(name: string, paths: string[], patch: Record<string, object> = {}): string {
  const all = JSON.parse(readFileSync(join(import.meta.dir, '../../feeds/catalog.json'), 'utf8')).feeds as { path: string }[];
  const feeds = paths.map((p) => ({ ...all.find((x) => x.path === p)!, ...(patch[p] ?? {}) }));
  const path = join(tmp, name);
  writeFileSync(path, JSON.stringify({ feeds }));
  return path;
}

interface Run {
  code: number;
  log: string;
  /** The feed state file the run left beside the index. */
  state: string;
}

/** Runs `feeds update --no-build` in-process against the mirror; captures stderr. */
async function update(dir: string, catalog: string, ...more: string[]): Promise<Run> {
  const lines: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void lines.push(args.join(' '));
  let code: number;
  try {
    code = await main(['update', '--dir', dir, '--catalog', catalog, '--mirror', mirror.url, '--index', join(dir, 'index.idx'), '--no-build', ...more]);
  } finally {
    console.error = original;
  }
  const statePath = join(dir, 'index.idx.feeds-state.json');
  return { code, log: lines.join('\n'), state: existsSync(statePath) ? readFileSync(statePath, 'utf8') : '' };
}

/** The summary table's row of one feed. */
const rowOf = (run: Run, path: string) => run.log.split('\n').find((l) => l.startsWith(`${path} `)) ?? '';
const stateOf = (run: Run, path: string) => JSON.parse(run.state).feeds[path];

/** This process's peak RSS since the last reset (Linux VmHWM), or null where /proc does not say. */
function peakRss(): number | null {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return kb ? Number(kb[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Peak growth of this process's RSS while `work` runs: the kernel's high-water mark (reset first), else samples every 20 ms. */
async function peakRssGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growthMb: number; seconds: number }> {
  Bun.gc(true);
  const base = process.memoryUsage.rss();
  try {
    // Resets VmHWM to the current RSS: a synchronous peak between two samples is still seen.
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    // Not Linux, or not allowed: the samples alone.
  }
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  const t0 = performance.now();
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage.rss(), peakRss() ?? 0);
    return { result, growthMb: Math.round((peak - base) / 1048576), seconds: Math.round(performance.now() - t0) / 1000 };
  } finally {
    clearInterval(timer);
  }
}

/** Counts the parses of copies of `type` (a spy on the parser table the validation loads its parser from) until `restore`. */
function countParses(type: string): { count: () => number; restore: () => void } {
  const real = PARSERS[type];
  let n = 0;
  PARSERS[type] = async () => {
    const mod = await real();
    return {
      parse: (ctx, sink) => {
        n++;
        return mod.parse(ctx, sink);
      },
    };
  };
  return { count: () => n, restore: () => void (PARSERS[type] = real) };
}

describe('a poisoned third-party list is refused and the previous copy stays', () => {
  const dir = () => join(tmp, 'poison');
  let catalog: string;
  let vpnText: string;
  let vpn6Text: string;

  beforeAll(async () => {
    // minRows lowered so the 2 % shrink is refused for the shrink (the real floor would refuse it first).
    catalog = writeCatalog('poison.json', [VPN, VPN6], { [VPN]: { minRows: 100 } });
    vpnText = readFileSync(join(FEEDS_DIR, VPN), 'utf8');
    vpn6Text = readFileSync(join(FEEDS_DIR, VPN6), 'utf8');
    const first = await update(dir(), catalog);
    expect(first.code).toBe(0);
  });

  /** Serves `text` for `path` for one update; returns the run. */
  async function serving(path: string, text: string, ...more: string[]): Promise<Run> {
    mirror.overrides.set(path, () => new Response(text));
    try {
      return await update(dir(), catalog, ...more);
    } finally {
      mirror.overrides.clear();
    }
  }

  const cases: Array<[string, string, string, RegExp]> = [
    ['0.0.0.0/0', VPN, '0.0.0.0/0\n', /refused: lists the whole IPv4 space \(\/0\)/],
    ['::/0', VPN6, '::/0\n', /refused: lists the whole IPv6 space \(\/0\)/],
    ['a /4', VPN, '16.0.0.0/4\n', /refused: a range as wide as a \/4 in a vpn list that is not the holder's own \(widest allowed: \/8 of IPv4\)/],
    ['2 % of the announced IPv4 space in /9s', VPN, Array.from({ length: 8 }, (_, i) => `${20 + i}.0.0.0/9`).join('\n') + '\n', /refused: covers 2\.\d% of the announced IPv4 space .* a vpn list may cover at most 2%/],
  ];
  for (const [name, path, extra, reason] of cases) {
    test(`a line ${name} in a VPN list`, async () => {
      const base = path === VPN ? vpnText : vpn6Text;
      const before = readFileSync(join(dir(), path));
      const run = await serving(path, base + extra);
      expect(run.code).toBe(1);
      expect(rowOf(run, path)).toMatch(/kept-previous/);
      expect(rowOf(run, path)).toMatch(reason);
      expect(readFileSync(join(dir(), path))).toEqual(before);
      const st = stateOf(run, path);
      expect(st.refused).toBe(true);
      expect(st.reason).toMatch(reason);
      // The state keeps the accepted copy's numbers, not the refused one's.
      expect(st.copy.sha256).toBe(new Bun.CryptoHasher('sha256').update(before).digest('hex'));
    });
  }

  test('a coverage jump beyond 4x is refused; --accept takes it', async () => {
    // Four /10s: 16.8 M addresses on top of 3.1 M, within the 2 % share but more than 4x the previous copy.
    const grown = vpnText + ['30.0.0.0/10', '30.64.0.0/10', '30.128.0.0/10', '30.192.0.0/10'].join('\n') + '\n';
    const refused = await serving(VPN, grown);
    expect(rowOf(refused, VPN)).toMatch(/refused: IPv4 coverage moved from 3144482 to 19921698 addresses \(more than 4x; --accept takes it\)/);
    const accepted = await serving(VPN, grown, '--accept', VPN);
    expect(rowOf(accepted, VPN)).toMatch(/^vpn\/x4bnet-vpn-ipv4\.txt +updated/);
    expect(readFileSync(join(dir(), VPN), 'utf8')).toBe(grown);
    expect(stateOf(accepted, VPN).refused).toBe(false);
    expect(stateOf(accepted, VPN).copy.v4.units).toBe(19921698);
    // Back to the original: a shrink of coverage by more than 4x, taken the same way.
    expect(rowOf(await serving(VPN, vpnText), VPN)).toMatch(/refused: IPv4 coverage moved/);
    expect(rowOf(await serving(VPN, vpnText, '--accept', VPN), VPN)).toMatch(/updated/);
  });

  test('a list shrinking to 2 % of its rows is refused; --accept takes it', async () => {
    const lines = vpnText.split('\n').filter((l) => l.trim() !== '');
    const shrunk = lines.slice(0, Math.floor(lines.length * 0.02)).join('\n') + '\n';
    const refused = await serving(VPN, shrunk);
    expect(rowOf(refused, VPN)).toMatch(/refused: shrank from 10862 to 217 rows \(98% lost, at most 50% allowed\)/);
    expect(readFileSync(join(dir(), VPN), 'utf8')).toBe(vpnText);
    const accepted = await serving(VPN, shrunk, '--accept', VPN);
    expect(rowOf(accepted, VPN)).toMatch(/updated +217 +10862/);
    expect(readFileSync(join(dir(), VPN), 'utf8')).toBe(shrunk);
  });

  test('a poisoned copy accepted before these checks is no baseline: the clean copy replaces it', async () => {
    const d = join(tmp, 'poisoned-before');
    const c = writeCatalog('poisoned-before.json', [VPN]);
    mkdirSync(join(d, 'vpn'), { recursive: true });
    writeFileSync(join(d, VPN), `${vpnText}0.0.0.0/0\n`);
    const run = await update(d, c);
    expect(rowOf(run, VPN)).toMatch(/updated +10862 +10863/);
    expect(readFileSync(join(d, VPN), 'utf8')).toBe(vpnText);
  });

  test('--accept never waives the bounds every copy meets', async () => {
    const run = await serving(VPN, vpnText + '0.0.0.0/0\n', '--accept', VPN);
    expect(rowOf(run, VPN)).toMatch(/refused: lists the whole IPv4 space/);
  });

  test('--accept of a feed the catalog does not name is a usage error', async () => {
    expect((await update(dir(), catalog, '--accept', 'vpn/nope.txt')).code).toBe(2);
  });
});

describe('redirects', () => {
  const dir = () => join(tmp, 'redirects');
  let catalog: string;

  beforeAll(() => {
    catalog = writeCatalog('redirects.json', [GOOGLEBOT]);
  });

  async function redirected(location: string): Promise<Run> {
    mirror.overrides.set(GOOGLEBOT, () => new Response(`moved, ${SECRET}`, { status: 302, headers: { location } }));
    try {
      return await update(dir(), catalog);
    } finally {
      mirror.overrides.clear();
    }
  }

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
    mirror.overrides.set('crawlers/elsewhere.json', () => new Response(Bun.file(join(FEEDS_DIR, GOOGLEBOT))));
    mirror.overrides.set(GOOGLEBOT, () => new Response(null, { status: 301, headers: { location: '/crawlers/elsewhere.json' } }));
    try {
      expect(rowOf(await update(dir(), catalog), GOOGLEBOT)).toMatch(/updated +315/);
      mirror.overrides.set(GOOGLEBOT, () => new Response(null, { status: 302, headers: { location: `/${GOOGLEBOT}` } }));
      expect(rowOf(await update(dir(), catalog), GOOGLEBOT)).toMatch(/redirect refused: more than 5 redirects/);
    } finally {
      mirror.overrides.clear();
    }
  });

  test('a real https publisher: a redirect down to http is refused, one within its origin is followed (feeds update in a child trusting a test CA)', async () => {
    const openssl = Bun.which('openssl');
    if (!openssl) {
      if (process.env.CI === 'true') throw new Error('openssl is needed for the https publisher');
      console.log('skipped: no openssl to make the https publisher a certificate');
      return;
    }
    const tls = join(tmp, 'tls');
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
        if (path === '/real/googlebot.json') return new Response(Bun.file(join(FEEDS_DIR, GOOGLEBOT)));
        return new Response('not found', { status: 404 });
      },
    });
    try {
      const run = async (from: string) => {
        const dir = join(tmp, `tls-${from}`);
        const catalog = writeCatalog(`tls-${from}.json`, [GOOGLEBOT], { [GOOGLEBOT]: { url: `https://127.0.0.1:${https.port}/${from}/googlebot.json` } });
        const child = Bun.spawn(['bun', join(import.meta.dir, '../../src/commands/feeds/cli.ts'), 'update', '--dir', dir, '--catalog', catalog, '--index', join(dir, 'index.idx'), '--no-build'], {
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
    expect(redirectVerdict(from, new URL('http://www.gstatic.com/ipranges/goog.json'), scope)).toBe('redirect refused: https to a plain-http URL');
    expect(redirectVerdict(from, new URL('https://www.gstatic.com/other.json'), scope)).toBe('same-origin');
    expect(redirectVerdict(from, new URL('https://gstatic.example/goog.json'), scope)).toBeNull();
    expect(redirectVerdict(from, new URL('https://169.254.169.254/'), scope)).toBe("redirect refused: to a host other than the catalog entry's");
    expect(redirectVerdict(from, new URL('https://user:pw@gstatic.example/'), scope)).toBe('redirect refused: URL with credentials');
  });
});

describe('huge and compressed feeds stop at their bounds with bounded memory', () => {
  const dir = () => join(tmp, 'huge');
  const measured: string[] = [];
  afterAll(() => console.log(`hostile feeds (peak RSS growth of the validating process, time):\n  ${measured.join('\n  ')}`));

  test('a gzip bomb (10 MB -> 4.8 GB) stops at its inflation bound', async () => {
    const catalog = writeCatalog('bomb.json', [RIS6], { [RIS6]: { minRows: 1 } });
    // Comment lines of the RIS format: the parse skips them, the inflation bound is what stops the copy.
    const bomb = gzipBomb(10_000_000, '%');
    mirror.overrides.set(RIS6, () => bomb.response());
    try {
      const { result: run, growthMb, seconds } = await peakRssGrowth(() => update(dir(), catalog));
      measured.push(`gzip bomb ${Math.round(bomb.wireBytes / 1e6)} MB -> ${Math.round(bomb.inflatedBytes / 1e9)} GB: +${growthMb} MB, ${seconds} s`);
      expect(rowOf(run, RIS6)).toMatch(/missing .*refused: decompresses to more than \d+ bytes \(the bound for this feed\)/);
      expect(growthMb).toBeLessThan(300);
    } finally {
      mirror.overrides.clear();
    }
  }, 120_000);

  test('a Content-Encoding gzip bomb on a plain feed stops at the size bound, counted after decoding', async () => {
    const catalog = writeCatalog('encoding-bomb.json', [VPN6]);
    const bomb = gzipBomb(10_000_000, '#');
    mirror.overrides.set(VPN6, () => bomb.response({ 'content-encoding': 'gzip' }));
    try {
      const { result: run, growthMb, seconds } = await peakRssGrowth(() => update(dir(), catalog));
      measured.push(`Content-Encoding bomb ${Math.round(bomb.wireBytes / 1e6)} MB -> ${Math.round(bomb.inflatedBytes / 1e9)} GB: +${growthMb} MB, ${seconds} s`);
      expect(rowOf(run, VPN6)).toMatch(/missing .*larger than 67108864 bytes/);
      expect(growthMb).toBeLessThan(300);
    } finally {
      mirror.overrides.clear();
    }
  }, 120_000);

  test('a 500 MB JSON feed is refused at its type bound before any parse', async () => {
    const catalog = writeCatalog('json.json', [GOOGLEBOT]);
    const json = hugeJson(500e6);
    mirror.overrides.set(GOOGLEBOT, () => json.response());
    const parses = countParses('crawler-ranges');
    try {
      const { result: run, growthMb, seconds } = await peakRssGrowth(() => update(dir(), catalog));
      measured.push(`JSON 500 MB: +${growthMb} MB, ${seconds} s, stopped after ${json.sent()} of ${json.chunks} chunks`);
      expect(rowOf(run, GOOGLEBOT)).toMatch(/missing .*larger than 8388608 bytes/);
      expect(parses.count()).toBe(0);
      expect(json.sent()).toBeLessThan(json.chunks / 10);
      expect(growthMb).toBeLessThan(200);
    } finally {
      parses.restore();
      mirror.overrides.clear();
    }
  }, 120_000);

  test('a list of 10 M /128 lines: refused at the download bound; with the bound raised, the streamed parse stops at the range bound', async () => {
    const lines = hostLines(10_000_000);
    mirror.overrides.set(VPN6, () => lines.response());
    try {
      const a = await peakRssGrowth(() => update(dir(), writeCatalog('lines.json', [VPN6])));
      measured.push(`10 M /128 lines, default bound: +${a.growthMb} MB, ${a.seconds} s, ${lines.sent()} lines sent`);
      expect(rowOf(a.result, VPN6)).toMatch(/missing .*larger than 67108864 bytes/);
      expect(a.growthMb).toBeLessThan(200);

      const b = await peakRssGrowth(() => update(dir(), writeCatalog('lines-big.json', [VPN6], { [VPN6]: { maxMb: 1024 } })));
      measured.push(`10 M /128 lines, maxMb 1024 (streamed parse): +${b.growthMb} MB, ${b.seconds} s`);
      expect(rowOf(b.result, VPN6)).toMatch(/missing .*refused: more than 2000000 ranges \(the bound for cidr-list\)/);
      expect(b.growthMb).toBeLessThan(300);
    } finally {
      mirror.overrides.clear();
    }
  }, 300_000);

  test('a line longer than 64 KiB is refused without holding it', async () => {
    const catalog = writeCatalog('longline.json', [VPN6]);
    const chunk = new Uint8Array(1 << 20).fill(0x41);
    mirror.overrides.set(VPN6, () => {
      let sent = 0;
      return streamed(() => (sent++ < 60 ? chunk : null));
    });
    try {
      const run = await update(dir(), catalog);
      expect(rowOf(run, VPN6)).toMatch(/refused: a line longer than 65536 bytes \(line 1\)/);
    } finally {
      mirror.overrides.clear();
    }
  }, 60_000);
});

describe('a parser that throws on a copy', () => {
  test('refuses that copy without its message, and the other feeds of the run go on', async () => {
    const dir = join(tmp, 'throwing');
    const catalog = writeCatalog('throwing.json', [GOOGLEBOT, VPN]);
    const real = PARSERS['crawler-ranges'];
    PARSERS['crawler-ranges'] = async () => ({
      parse: async () => {
        throw new TypeError(`cannot read ${SECRET}`);
      },
    });
    let run: Run;
    try {
      run = await update(dir, catalog);
    } finally {
      PARSERS['crawler-ranges'] = real;
    }
    expect(rowOf(run, GOOGLEBOT)).toMatch(/missing .*refused: the crawler-ranges parser failed on this copy \(TypeError\)$/);
    expect(rowOf(run, VPN)).toMatch(/updated +10862/);
    expect(run.log).not.toContain(SECRET);
    expect(run.state).not.toContain(SECRET);
  });
});

describe('an unchanged feed parses nothing', () => {
  test('the same bytes again: unchanged, no parse (a 304 likewise: the refresher tests count its downloads)', async () => {
    const dir = join(tmp, 'unchanged');
    mkdirSync(dir, { recursive: true });
    const catalog = writeCatalog('unchanged.json', [VPN, GOOGLEBOT]);
    expect((await update(dir, catalog)).code).toBe(0);
    const lists = countParses('cidr-list');
    const crawlers = countParses('crawler-ranges');
    try {
      const run = await update(dir, catalog);
      expect(rowOf(run, VPN)).toMatch(/unchanged +10862/);
      expect(rowOf(run, GOOGLEBOT)).toMatch(/unchanged +315/);
      expect(lists.count() + crawlers.count()).toBe(0);
      // A changed copy is parsed once: the previous copy's numbers come from the state, not a second parse.
      mirror.overrides.set(GOOGLEBOT, () => new Response(readFileSync(join(FEEDS_DIR, GOOGLEBOT), 'utf8').replace('"66.249.64.0/27"', '"66.249.64.0/28"')));
      expect(rowOf(await update(dir, catalog), GOOGLEBOT)).toMatch(/updated +315 +315/);
      expect(crawlers.count()).toBe(1);
      expect(lists.count()).toBe(0);
    } finally {
      lists.restore();
      crawlers.restore();
      mirror.overrides.clear();
    }
  });

  test('a remembered summary counts only for the bytes it describes: a copy changed by hand is replaced by the publisher\'s', async () => {
    const dir = join(tmp, 'by-hand');
    mkdirSync(dir, { recursive: true });
    const catalog = writeCatalog('by-hand.json', [GOOGLEBOT]);
    expect((await update(dir, catalog)).code).toBe(0);
    writeFileSync(join(dir, GOOGLEBOT), '{"prefixes": [{"ipv4Prefix": "192.0.2.0/24"}]}');
    expect(rowOf(await update(dir, catalog), GOOGLEBOT)).toMatch(/updated +315/);
    expect(readFileSync(join(dir, GOOGLEBOT))).toEqual(readFileSync(join(FEEDS_DIR, GOOGLEBOT)));
  });
});
