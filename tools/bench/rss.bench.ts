/**
 * Index file size and resident memory after 1M lookups, each variant in its
 * own fresh child process:
 *   - bare: a bun process that generates the same addresses and looks nothing up (baseline);
 *   - reader: IndexReader.open + 1M reader.lookup() calls;
 *   - server: the real services and fetch handler (createServices + createApp +
 *     createFetchHandler, rate limiter off) answering GET /v1/ip/<ip> in-process,
 *     without sockets: 1M requests over HTTP would measure the client, not the server.
 *
 *   bun tools/bench/rss.bench.ts [index-file] [--lookups N] [--requests N]
 *     (index default: $IPINTEL_INDEX, then data/ipintel.idx; lookups default 1,000,000, requests 250,000)
 *
 * RSS is split into anonymous memory (heap, caches) and file-backed pages
 * (the mapped index: the kernel can drop those under pressure). "after GC" is
 * after Bun.gc(true), so garbage does not count as retained.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Section } from '../../src/index/format.ts';
import { u32Section } from '../../src/index/map-index-file.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { formatIPv4, formatIPv6Groups } from '../../src/net/ip.ts';
import { fileSize, indexPathArg, mib, printTable, procStatus, xorshift32 } from './bench-kit.ts';

type Variant = 'bare' | 'reader' | 'server';
interface Snapshot {
  rss: number;
  anon: number;
  file: number;
  hwm: number;
}
interface ChildReport {
  afterOpen: Snapshot;
  afterN: Snapshot;
  afterGc: Snapshot;
  count: number;
  seconds: number;
}

const snapshot = (): Snapshot => {
  const s = procStatus();
  return { rss: s.VmRSS, anon: s.RssAnon, file: s.RssFile + (s.RssShmem ?? 0), hwm: s.VmHWM };
};

/** Addresses on the fly (never held in memory): 3 in 4 uniform IPv4, 1 in 4 the start of a random IPv6 interval. */
function addressStream(reader: IndexReader | null): () => string {
  const rand = xorshift32(0xc0ffee);
  const v6 = reader ? u32Section(reader.file, Section.V6_STARTS) : null;
  const groups = new Array<number>(8);
  let n = 0;
  return () => {
    if (n++ % 4 !== 3 || !v6) return formatIPv4(rand());
    const i = rand() % (v6.length / 4);
    for (let k = 0; k < 4; k++) {
      groups[2 * k] = v6[4 * i + k] >>> 16;
      groups[2 * k + 1] = v6[4 * i + k] & 0xffff;
    }
    return formatIPv6Groups(groups);
  };
}

async function child(variant: Variant, indexPath: string, count: number): Promise<never> {
  let op: (ip: string) => Promise<number> | number;
  let reader: IndexReader | null = null;
  const work = mkdtempSync(join(tmpdir(), 'ipintel-rss-'));
  if (variant === 'reader') {
    reader = IndexReader.open(indexPath);
    op = (ip) => reader!.lookup(ip)!.recordId;
  } else if (variant === 'server') {
    const { loadConfig } = await import('../../src/config.ts');
    const { createServices } = await import('../../src/host/start-server.ts');
    const { createApp } = await import('../../src/http/app.ts');
    const { createFetchHandler } = await import('../../src/http/server.ts');
    const config = loadConfig({ ...process.env, IPINTEL_INDEX: indexPath, IPINTEL_DB: join(work, 'db.sqlite') });
    const services = await createServices(config, { limiter: null });
    reader = services.index.current;
    const handle = createFetchHandler(services, createApp(services));
    op = async (ip) => {
      const res = await handle(new Request(`http://127.0.0.1/v1/ip/${ip}`), null);
      if (res.status !== 200) throw new Error(`GET /v1/ip/${ip} answered ${res.status}`);
      return (await res.arrayBuffer()).byteLength;
    };
  } else {
    op = (ip) => ip.length;
  }
  // The bare baseline walks the same kind of strings without an index.
  // (opened unverified, so only the IPv6 starts it samples are paged in, not the whole file).
  const next = addressStream(variant === 'bare' ? IndexReader.open(indexPath, { verifyChecksums: false }) : reader);
  Bun.gc(true);
  const afterOpen = snapshot();
  const t0 = Bun.nanoseconds();
  let sink = 0;
  for (let i = 0; i < count; i++) {
    const r = op(next());
    sink += typeof r === 'number' ? r : await r;
  }
  const seconds = (Bun.nanoseconds() - t0) / 1e9;
  const afterN = snapshot();
  Bun.gc(true);
  const afterGc = snapshot();
  rmSync(work, { recursive: true, force: true });
  const report: ChildReport = { afterOpen, afterN, afterGc, count, seconds };
  console.log(JSON.stringify(report), sink === -1 ? '' : '');
  process.exit(0);
}

const args = process.argv.slice(2);
if (args[0] === '--child') await child(args[1] as Variant, args[2], Number(args[3]));

const option = (name: string, fallback: number): number => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args.splice(at, 2)[1]) : fallback;
};
const LOOKUPS = option('--lookups', 1_000_000);
// In-process requests run at a few thousand per second on this machine: 250k keeps the run
// near a minute; pass --requests 1000000 for the full figure.
const REQUESTS = option('--requests', 250_000);
const indexPath = indexPathArg(['', '', ...args]);

function run(variant: Variant, count: number): ChildReport {
  const res = Bun.spawnSync(['bun', import.meta.path, '--child', variant, indexPath, String(count)], { stderr: 'pipe' });
  if (res.exitCode !== 0) throw new Error(`${variant} child failed: ${res.stderr.toString().slice(-2000)}`);
  return JSON.parse(res.stdout.toString().trim()) as ChildReport;
}

const reports: [string, ChildReport][] = [
  ['bare bun, same address stream (baseline)', run('bare', LOOKUPS)],
  ['reader: open + reader.lookup()', run('reader', LOOKUPS)],
  ['server: services + fetch handler, GET /v1/ip', run('server', REQUESTS)],
];
const base = reports[0][1].afterGc.rss;
console.log(`index ${indexPath}: file size ${mib(fileSize(indexPath))} (${fileSize(indexPath).toLocaleString()} bytes)\n`);
printTable([
  ['process', 'ops', 'ops/s', 'RSS at start', 'RSS after', 'after GC', 'of which anon', 'of which file', 'peak (HWM)', 'after GC vs baseline'],
  ...reports.map(([name, r]) => [
    name,
    r.count.toLocaleString(),
    Math.round(r.count / r.seconds).toLocaleString(),
    mib(r.afterOpen.rss),
    mib(r.afterN.rss),
    mib(r.afterGc.rss),
    mib(r.afterGc.anon),
    mib(r.afterGc.file),
    mib(r.afterGc.hwm),
    `${(r.afterGc.rss / base).toFixed(2)}x`,
  ]),
]);
console.log('\n(the file column is the mapped index pages touched so far, plus the runtime binary itself)');
