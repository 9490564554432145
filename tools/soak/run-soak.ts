/**
 * One soak run: the real server as a child process over a temp copy of a
 * small index, bounded-concurrency mixed traffic for a fixed time, an
 * atomic index swap + POST /reload every few seconds, and RSS sampled every
 * second. Returns a report; the verdict is in `report.failures`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prng } from '../../test/helpers/prng.ts';
import { startDnsTestServer, type DnsTestServer } from '../../test/crawlers/dns-test-server.ts';
import { REPO_ROOT, startChildServer, type ChildServer } from './child-server.ts';
import { buildSoakIndexes, builtAtOf, swapIndexFile } from './indexes.ts';
import { judgeRss, startRssSampler, type RssSample, type RssVerdict } from './rss.ts';
import { CRAWLER_DNS, requestMix, type PlannedRequest, type SoakKeys } from './traffic.ts';

export interface SoakOptions {
  durationMs: number;
  /** Requests in flight at once (closed loop: each worker sends its next request when the last one is answered). */
  concurrency: number;
  reloadEveryMs: number;
  /** Allowed RSS growth, late median over early median (see rss.ts). */
  rssLimitKiB: number;
  /** Samples before this are start-up, not steady state. */
  rssWarmupMs: number;
  /** A request unanswered after this long counts as dropped. */
  requestTimeoutMs: number;
  seed: number;
  /** Two index files to alternate between; built from the shared feeds when absent. */
  indexA?: string;
  indexB?: string;
  feedsDir?: string;
  /** Progress lines (stderr in the CLI). */
  log?: (line: string) => void;
}

export const DEFAULT_SOAK: SoakOptions = {
  durationMs: 60_000,
  concurrency: 16,
  reloadEveryMs: 5_000,
  rssLimitKiB: 32 * 1024,
  rssWarmupMs: 10_000,
  requestTimeoutMs: 10_000,
  seed: 20261122,
};

export interface SoakReport {
  options: Omit<SoakOptions, 'log'>;
  elapsedMs: number;
  requests: number;
  byStatus: Record<string, number>;
  byKind: Record<string, Record<string, number>>;
  serverErrors: number;
  dropped: number;
  unexpected: number;
  wrongAnswers: number;
  /** The first few problems of each sort, for the summary. */
  samples: { dropped: string[]; unexpected: string[]; wrong: string[]; serverErrors: string[] };
  reloads: { ok: number; failed: number; failures: string[]; lastGeneration: number };
  /** Outcomes of the crawler verifications answered 200 (proof the DNS path ran). */
  verifyStatuses: Record<string, number>;
  /** Client-side latency of answered requests, ms (informative: the machine is shared, nothing asserts it). */
  latencyMs: { p50: number; p99: number; max: number };
  rss: RssVerdict;
  rssSamples: RssSample[];
  childExitCode: number | null;
  childStderrTail: string[];
  failures: string[];
}

const ADMIN_TOKEN = 'soak-admin-token';
const MAX_SAMPLES = 5;

/** Creates a key with the operator script, as `bun run keys create` does. */
async function createKey(dbPath: string, email: string, tier: 'free' | 'pro'): Promise<string> {
  const proc = Bun.spawn([process.execPath, 'run', 'src/cli.ts', 'keys', 'create', '--email', email, '--tier', tier], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', IPINTEL_DB: dbPath },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`keys create failed (${code}): ${err}`);
  return out.trimEnd().split('\n').at(-1)!;
}

const note = (list: string[], line: string) => {
  if (list.length < MAX_SAMPLES) list.push(line);
};

/** Runs a soak and returns its report (never throws for a failed verdict, only for a soak that could not start). */
export async function runSoak(partial: Partial<SoakOptions> = {}): Promise<SoakReport> {
  const o: SoakOptions = { ...DEFAULT_SOAK, ...partial };
  const log = o.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'ipintel-soak-'));
  let server: ChildServer | null = null;
  let dns: DnsTestServer | null = null;
  try {
    // A loopback DNS server answering for the crawler addresses (short TTLs, so
    // lookups recur): verification takes its real path, nothing leaves the machine.
    dns = await startDnsTestServer();
    for (const { ip, host } of CRAWLER_DNS) {
      if (!host) continue;
      dns.set('PTR', `${ip.split('.').reverse().join('.')}.in-addr.arpa`, { records: [{ data: host, ttl: 2 }] });
      dns.set('A', host, { records: [{ data: ip, ttl: 2 }] });
    }
    let files: { a: string; b: string };
    if (o.indexA && o.indexB) files = { a: o.indexA, b: o.indexB };
    else {
      log('building two small indexes from the shared feeds');
      files = await buildSoakIndexes(dir, o.feedsDir);
    }
    const expectedBuiltAt = { a: builtAtOf(files.a), b: builtAtOf(files.b) };
    const live = join(dir, 'live.idx');
    swapIndexFile(files.a, live);
    const dbPath = join(dir, 'accounts.sqlite');
    const keys: SoakKeys = { free: await createKey(dbPath, 'soak-free@example.test', 'free'), pro: await createKey(dbPath, 'soak-pro@example.test', 'pro') };

    server = await startChildServer({
      IPINTEL_INDEX: live,
      IPINTEL_DB: dbPath,
      IPINTEL_ADMIN_TOKEN: ADMIN_TOKEN,
      IPINTEL_DNS_SERVERS: dns.address,
      IPINTEL_TRUST_PROXY: 'loopback', // so X-Forwarded-For spreads anonymous traffic over many clients
      IPINTEL_FEEDS_DIR: join(dir, 'no-feeds'),
    });
    log(`server pid ${server.pid} on ${server.url}; soaking ${o.durationMs / 1000} s at concurrency ${o.concurrency}, reload every ${o.reloadEveryMs / 1000} s`);
    const sampler = startRssSampler(server.pid, 1_000, 'live.idx');

    const byStatus: Record<string, number> = {};
    const byKind: Record<string, Record<string, number>> = {};
    const samples: SoakReport['samples'] = { dropped: [], unexpected: [], wrong: [], serverErrors: [] };
    let requests = 0;
    let serverErrors = 0;
    let dropped = 0;
    let unexpected = 0;
    let wrongAnswers = 0;
    const latencies: number[] = [];
    const verifyStatuses: Record<string, number> = {};
    const t0 = performance.now();
    const deadline = t0 + o.durationMs;
    const base = server.url;

    const send = async (req: PlannedRequest) => {
      requests++;
      let status: number;
      let text: string;
      let contentType: string;
      let headers: Headers;
      const started = performance.now();
      try {
        const res = await fetch(base + req.path, { method: req.method, headers: req.headers, body: req.body, signal: AbortSignal.timeout(o.requestTimeoutMs) });
        text = await res.text();
        latencies.push(performance.now() - started);
        status = res.status;
        contentType = res.headers.get('content-type') ?? '';
        headers = res.headers;
      } catch (e) {
        dropped++;
        note(samples.dropped, `${req.method} ${req.path}: ${(e as Error).name}: ${(e as Error).message}`);
        (byKind[req.kind] ??= {}).dropped = (byKind[req.kind].dropped ?? 0) + 1;
        return;
      }
      byStatus[status] = (byStatus[status] ?? 0) + 1;
      const kindCounts = (byKind[req.kind] ??= {});
      kindCounts[status] = (kindCounts[status] ?? 0) + 1;
      // /health's 503 during a reload across workers is its readiness answer (checked by the kind's rule), not a server error.
      if (status >= 500 && !(req.kind === 'health' && status === 503)) {
        serverErrors++;
        note(samples.serverErrors, `${req.method} ${req.path} -> ${status} ${text.slice(0, 200)}`);
      }
      if (!req.expect.includes(status)) {
        unexpected++;
        note(samples.unexpected, `${req.kind} ${req.method} ${req.path} -> ${status} ${text.slice(0, 200)}`);
        return;
      }
      if (req.kind === 'crawler_verify' && status === 200) {
        const outcome = String((JSON.parse(text) as { verification_status?: unknown }).verification_status);
        verifyStatuses[outcome] = (verifyStatuses[outcome] ?? 0) + 1;
      }
      const wrong = req.check(status, contentType, text, headers);
      if (wrong) {
        wrongAnswers++;
        note(samples.wrong, `${req.kind} ${req.method} ${req.path} -> ${status}: ${wrong}`);
      }
    };

    const worker = async (i: number) => {
      const next = requestMix(prng(o.seed + i), keys);
      while (performance.now() < deadline) await send(next());
    };

    const reloads: SoakReport['reloads'] = { ok: 0, failed: 0, failures: [], lastGeneration: 1 };
    const reloader = async () => {
      let useB = true;
      while (performance.now() + o.reloadEveryMs < deadline) {
        await Bun.sleep(o.reloadEveryMs);
        const which = useB ? 'b' : 'a';
        useB = !useB;
        try {
          swapIndexFile(files[which], live);
          const res = await fetch(`${base}/reload`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, signal: AbortSignal.timeout(o.requestTimeoutMs) });
          const body = (await res.json()) as { reloaded?: boolean; index?: { built_at?: string; generation?: number } };
          const generation = body.index?.generation ?? -1;
          if (res.status !== 200 || body.reloaded !== true) throw new Error(`status ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
          if (body.index?.built_at !== expectedBuiltAt[which]) throw new Error(`built_at ${body.index?.built_at}, expected ${expectedBuiltAt[which]} (index ${which})`);
          if (generation !== reloads.lastGeneration + 1) throw new Error(`generation ${generation} after ${reloads.lastGeneration}`);
          reloads.lastGeneration = generation;
          reloads.ok++;
          log(`reload ${reloads.ok}: index ${which} live (generation ${generation}), ${requests} requests so far`);
        } catch (e) {
          reloads.failed++;
          note(reloads.failures, (e as Error).message);
        }
      }
    };

    await Promise.all([...Array.from({ length: o.concurrency }, (_, i) => worker(i)), reloader()]);
    const elapsedMs = Math.round(performance.now() - t0);
    sampler.stop();
    const wasAlive = server.alive();
    const childStderrTail = server.stderrTail();
    const childExitCode = await server.stop();
    server = null;

    const rss = judgeRss(sampler.samples, o.rssWarmupMs, o.rssLimitKiB);
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => (latencies.length ? Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] * 10) / 10 : NaN);
    const latencyMs = { p50: pct(0.5), p99: pct(0.99), max: pct(1) };
    const failures: string[] = [];
    if (!wasAlive) failures.push('the server died during the soak');
    if (serverErrors > 0) failures.push(`${serverErrors} responses were 5xx`);
    if (dropped > 0) failures.push(`${dropped} requests were dropped (no response within ${o.requestTimeoutMs} ms or connection error)`);
    if (unexpected > 0) failures.push(`${unexpected} responses had a status their request should never get`);
    if (wrongAnswers > 0) failures.push(`${wrongAnswers} responses had the right status but a wrong body`);
    if (reloads.failed > 0) failures.push(`${reloads.failed} reloads failed`);
    if (reloads.ok === 0 && o.durationMs > o.reloadEveryMs * 2) failures.push('no reload happened');
    if (!rss.flat) failures.push(`RSS grew: total median +${Math.round(rss.totalGrowthKiB / 1024)} MiB, anon median +${Math.round(rss.anonGrowthKiB / 1024)} MiB (limit ${Math.round(rss.limitKiB / 1024)} MiB each)`);
    if (childExitCode !== 0) failures.push(`the server exited with ${childExitCode} on SIGTERM`);
    const { log: _log, ...options } = o;
    return {
      options,
      elapsedMs,
      requests,
      byStatus,
      byKind,
      serverErrors,
      dropped,
      unexpected,
      wrongAnswers,
      samples,
      reloads,
      verifyStatuses,
      latencyMs,
      rss,
      rssSamples: sampler.samples,
      childExitCode,
      childStderrTail,
      failures,
    };
  } finally {
    if (server) await server.stop(2_000);
    await dns?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
