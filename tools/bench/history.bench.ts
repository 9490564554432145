/**
 * The history of served indexes (IPINTEL_HISTORY, src/index/history/):
 *
 *   bun tools/bench/history.bench.ts OLD.idx NEW.idx [--requests N]
 *
 * Records OLD (a keyframe) and NEW (its change against OLD) into a fresh
 * history folder, as served two days and one day ago, and reports what each
 * recording wrote and took. Then starts a server over NEW and measures: the
 * first `?at=` answer for OLD's day (a cold rebuild on the history thread)
 * and the slowest current answer while it runs, then N warm past answers
 * against N current answers of the same random addresses (sequential, one
 * connection, means per request).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config.ts';
import { historySizeBytes, recordVersion } from '../../src/index/history/store.ts';
import { startServer } from '../../src/host/start-server.ts';

const { values, positionals } = parseArgs({ args: process.argv.slice(2), allowPositionals: true, options: { requests: { type: 'string' } } });
if (positionals.length !== 2) {
  console.error('usage: bun tools/bench/history.bench.ts OLD.idx NEW.idx [--requests N]');
  process.exit(2);
}
const [oldPath, newPath] = positionals;
const requests = Number(values.requests ?? 2000);
const DAY = 86_400_000;
const now = Date.now();
const dir = mkdtempSync(join(tmpdir(), 'ipintel-history-bench-'));
const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;

try {
  for (const [path, servedFrom] of [[oldPath, now - 2 * DAY], [newPath, now - DAY]] as const) {
    const t = performance.now();
    const r = recordVersion(dir, path, servedFrom);
    console.log(`record ${path}: ${r.keyframe ? 'keyframe' : 'change'} ${mib(r.bytesWritten)} written in ${((performance.now() - t) / 1000).toFixed(1)} s; history ${mib(historySizeBytes(dir))}`);
  }
  const server = await startServer(
    loadConfig({ PORT: '0', HOST: '127.0.0.1', IPINTEL_INDEX: newPath, IPINTEL_DB: ':memory:', IPINTEL_DNS_SERVERS: '127.0.0.1:9', IPINTEL_RATE_LIMITS: 'off', IPINTEL_FEEDS_REFRESH: 'off', IPINTEL_HISTORY: '30d', IPINTEL_HISTORY_DIR: dir }),
  );
  try {
    const { user } = await server.services.accounts.signIn({ provider: 'oidc', subject: 'bench', email: null, emailVerified: false, name: null });
    const key = (await server.services.accounts.createKey(user.id, 'bench', 'free')).secret;
    const headers = { 'x-api-key': key };
    const at = new Date(now - 1.5 * DAY).toISOString();
    const ip = () => `${1 + Math.floor(Math.random() * 222)}.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}`;
    // The baseline: the slowest of as many current answers with nothing else under way.
    let slowestAlone = 0;
    const tb = performance.now();
    while (performance.now() - tb < 5000) {
      const t = performance.now();
      await (await fetch(`${server.url}/v1/ip/${ip()}`)).text();
      slowestAlone = Math.max(slowestAlone, performance.now() - t);
    }
    console.log(`current answers for 5 s alone: slowest ${slowestAlone.toFixed(1)} ms`);
    // Cold: the first past answer, with current answers asked meanwhile.
    let slowestCurrent = 0;
    let currentDuring = 0;
    let done = false;
    const t0 = performance.now();
    const cold = fetch(`${server.url}/v1/ip/8.8.8.8?at=${at}`, { headers }).then(async (r) => {
      await r.text();
      done = true;
      return { status: r.status, ms: performance.now() - t0 };
    });
    while (!done) {
      const t = performance.now();
      await (await fetch(`${server.url}/v1/ip/${ip()}`)).text();
      const took = performance.now() - t;
      if (took > 100 && process.env.HISTORY_BENCH_TRACE) console.log(`  slow current answer at +${((t - t0) / 1000).toFixed(2)} s: ${took.toFixed(0)} ms`);
      slowestCurrent = Math.max(slowestCurrent, took);
      currentDuring++;
    }
    const c = await cold;
    console.log(`cold ?at= answer: ${c.status} in ${(c.ms / 1000).toFixed(2)} s; ${currentDuring} current answers meanwhile, slowest ${slowestCurrent.toFixed(1)} ms`);
    const ips = Array.from({ length: requests }, ip);
    const run = async (suffix: string, h: Record<string, string>) => {
      const t = performance.now();
      for (const a of ips) await (await fetch(`${server.url}/v1/ip/${a}${suffix}`, { headers: h })).text();
      return (performance.now() - t) / ips.length;
    };
    await run('', headers); // warms the current memo as much as the past one is warmed below
    await run(`?at=${at}`, headers);
    const current = await run('', headers);
    const past = await run(`?at=${at}`, headers);
    console.log(`warm, ${requests} addresses, sequential: current ${(current * 1000).toFixed(0)} µs/answer, ?at= ${(past * 1000).toFixed(0)} µs/answer (${(past / current).toFixed(2)}×)`);
  } finally {
    await server.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
