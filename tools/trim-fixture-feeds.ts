/**
 * Writes test/fixtures/feeds/: the small feeds the test fixture index is
 * built from (test/helpers/fixture-index.ts), in each publisher's own format,
 * so a clone of the repository tests itself without the real snapshots.
 *
 *   bun tools/trim-fixture-feeds.ts <snapshots dir, e.g. a folder of real feed snapshots>
 *
 * Each file keeps its header and comment lines, its first data rows, and the
 * rows whose range holds an address named in a test (test/**\/*.ts), so the
 * addresses the tests ask about answer as they do on the full files. ASN
 * tables keep the ASNs the kept ranges and the tests name. Spamhaus lists,
 * whose terms do not allow redistribution, are generated instead: the same
 * NDJSON shape, with made-up SBL ids and names (see test/fixtures/feeds/README.md).
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import ipaddr from 'ipaddr.js';

const ROOT = resolve(import.meta.dir, '..');
const OUT = join(ROOT, 'test/fixtures/feeds');
/** Data rows kept from the top of every file, whatever the tests ask. */
const HEAD_ROWS = 40;
/** About this many rows more, evenly spread over a file, so random addresses meet varied records. */
const SPREAD_ROWS = 1500;

const src = process.argv[2];
if (!src) {
  console.error('usage: bun tools/trim-fixture-feeds.ts <snapshots dir>');
  process.exit(2);
}

/** Every IP address literal of the test sources. */
function testAddresses(): (ipaddr.IPv4 | ipaddr.IPv6)[] {
  const found = new Map<string, ipaddr.IPv4 | ipaddr.IPv6>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) {
        if (name !== 'fixtures') walk(p);
      } else if (name.endsWith('.ts')) {
        const text = readFileSync(p, 'utf8');
        for (const m of text.matchAll(/(?<![\w.:])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])|(?<![\w:])[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{0,4}){2,7}(?![\w:])/g)) {
          if (ipaddr.isValid(m[0])) found.set(m[0], ipaddr.parse(m[0]));
        }
      }
    }
  };
  walk(join(ROOT, 'test'));
  return [...found.values()];
}
const ADDRESSES = testAddresses();
const TEST_ASNS = new Set<number>();
for (const m of readdirSync(join(ROOT, 'test'), { recursive: true }) as string[]) {
  if (!m.endsWith('.ts')) continue;
  for (const a of readFileSync(join(ROOT, 'test', m), 'utf8').matchAll(/\bAS(\d{1,10})\b/g)) TEST_ASNS.add(Number(a[1]));
}

/** Whether a range (CIDR, or first address and count for RIR files) holds an address of the tests. */
function holdsTestAddress(first: string, bitsOrCount: number, isCount = false): boolean {
  if (!ipaddr.isValid(first)) return false;
  const base = ipaddr.parse(first);
  let bits = bitsOrCount;
  if (isCount) bits = base.kind() === 'ipv4' ? 32 - Math.round(Math.log2(bitsOrCount)) : bitsOrCount;
  return ADDRESSES.some((a) => a.kind() === base.kind() && (a as ipaddr.IPv4).match(base as ipaddr.IPv4, bits));
}

/** A line's first CIDR (or lone address, as a host route). */
function lineHolds(line: string): boolean {
  const m = /([0-9a-fA-F.:]+)(?:\/(\d+))?/.exec(line);
  if (!m || !ipaddr.isValid(m[1])) return false;
  const full = ipaddr.parse(m[1]).kind() === 'ipv4' ? 32 : 128;
  return holdsTestAddress(m[1], m[2] ? Number(m[2]) : full);
}

const read = (path: string) => {
  const raw = readFileSync(join(src, path));
  return path.endsWith('.gz') ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
};
const write = (path: string, text: string) => {
  const p = join(OUT, path);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, path.endsWith('.gz') ? gzipSync(text, { level: 9 }) : text);
  console.error(`${path}: ${text.split('\n').length} lines`);
};

/** Line formats: comments and blank lines stay, data rows stay when near the top or holding a test address. */
function trimLines(path: string, isComment: (l: string) => boolean, holds: (l: string) => boolean = lineHolds): string[] {
  const lines = read(path).split('\n');
  const stride = Math.max(1, Math.ceil(lines.length / SPREAD_ROWS));
  let rows = 0;
  const kept = lines.filter((l) => {
    if (l === '' || isComment(l)) return true;
    const i = rows++;
    return i < HEAD_ROWS || i % stride === 0 || holds(l);
  });
  write(path, kept.join('\n'));
  return kept;
}

const hash = (l: string) => l.startsWith('#');
const keptAsns = new Set<number>(TEST_ASNS);

for (const p of ['vpn/x4bnet-input-mullvadvpn-ips.txt', 'relay/derived-x4bnet-apple-private-relay-ips.txt', 'cloud/cloudflare-ips-v4.txt', 'bogons/fullbogons-ipv4.txt', 'cloud/digitalocean-geofeed.csv']) trimLines(p, hash);
for (const p of ['crawlers/googlebot.json', 'crawlers/bingbot.json', 'crawlers/gptbot.json', 'tor/torbulkexitlist']) write(p, read(p));
// RDAP answers: fixtures of MIT/BSD/Apache-licensed RDAP clients (openrdap, icann-rdap, ipwhois, whoisit), kept whole.
for (const name of readdirSync(join(src, 'rdap'))) write(`rdap/${name}`, read(`rdap/${name}`));

// Feodo: the address is the second quoted column.
trimLines('threat/feodotracker-ipblocklist.csv', (l) => hash(l) || l.startsWith('"first_seen'), (l) => lineHolds(l.split(',')[1]?.replaceAll('"', '') ?? ''));

// Tor exit-addresses: an exit's block is kept whole when one of its ExitAddress lines is.
{
  const blocks = read('tor/exit-addresses').split(/(?=^ExitNode )/m);
  const kept = blocks.filter((b, i) => i < HEAD_ROWS || b.split('\n').some((l) => l.startsWith('ExitAddress ') && lineHolds(l.slice(12))));
  write('tor/exit-addresses', kept.join(''));
}

// pfx2as: `start<TAB>bits<TAB>asn`.
for (const l of trimLines('routing/routeviews-rv2-20240406-1200.pfx2as.gz', () => false, (l) => {
  const [start, bits] = l.split('\t');
  return holdsTestAddress(start, Number(bits));
})) {
  for (const asn of (l.split('\t')[2] ?? '').split(/[_,]/)) if (asn) keptAsns.add(Number(asn));
}

// RIR delegated: `registry|cc|type|start|value|date|status`; the version and summary lines stay.
trimLines('rir/delegated-apnic-20260618.gz', (l) => hash(l) || /^\d/.test(l) || l.includes('|summary'), (l) => {
  const f = l.split('|');
  if (f[2] === 'asn') return TEST_ASNS.has(Number(f[3]));
  return holdsTestAddress(f[3], Number(f[4]), f[2] === 'ipv4');
});

// AWS: the JSON document with its prefix lists filtered.
{
  const doc = JSON.parse(read('cloud/aws-ip-ranges.json'));
  const filter = (list: Record<string, string>[], key: string) => list.filter((p, i) => i < HEAD_ROWS || lineHolds(p[key]));
  doc.prefixes = filter(doc.prefixes, 'ip_prefix');
  doc.ipv6_prefixes = filter(doc.ipv6_prefixes, 'ipv6_prefix');
  write('cloud/aws-ip-ranges.json', JSON.stringify(doc, null, 2) + '\n');
}

// Spamhaus DROP and ASN-DROP: generated in the publisher's NDJSON shape (ranges and ASNs the tests use, made-up ids).
{
  const real = read('threat/spamhaus-drop_v4.json').split('\n').filter((l) => l.startsWith('{"cidr"'));
  const rows = real.map((l) => JSON.parse(l) as { cidr: string; rir: string }).filter((r, i) => i < HEAD_ROWS || lineHolds(r.cidr));
  const lines = rows.map((r, i) => JSON.stringify({ cidr: r.cidr, sblid: `SBL9${String(i).padStart(5, '0')}`, rir: r.rir }));
  const meta = { type: 'metadata', timestamp: 1784798042, size: 0, records: lines.length, copyright: 'generated for the ipintel tests in the format of Spamhaus DROP', terms: 'test data' };
  write('threat/spamhaus-drop_v4.json', [...lines, JSON.stringify(meta)].join('\n') + '\n');
  const asns = read('threat/spamhaus-asndrop.json').split('\n').filter((l) => l.startsWith('{"asn"')).map((l) => JSON.parse(l) as { asn: number; rir: string; cc: string });
  const keptDrop = asns.filter((a, i) => i < HEAD_ROWS || TEST_ASNS.has(a.asn));
  const asnLines = keptDrop.map((a, i) => JSON.stringify({ asn: a.asn, rir: a.rir, domain: `example-${i}.test`, cc: a.cc, asname: `TEST-NET-${i}` }));
  for (const a of keptDrop) keptAsns.add(a.asn);
  write('threat/spamhaus-asndrop.json', [...asnLines, JSON.stringify({ ...meta, records: asnLines.length, copyright: 'generated for the ipintel tests in the format of Spamhaus ASN-DROP' })].join('\n') + '\n');
}

// asn2org: the header, the first rows, and every ASN kept above or named by a test.
trimLines('asn/asn2org-asns.csv.gz', (l) => l.startsWith('"asn"'), (l) => keptAsns.has(Number(l.split(',')[0])));
