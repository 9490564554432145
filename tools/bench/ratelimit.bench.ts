/**
 * Rate limiter cost, each figure against a baseline measured in the same run:
 *  1. in process (memory store): consume() per request vs a bare Map get+set
 *     over the same keys; the bucket's memory per entry;
 *  1b. shared buckets (IPINTEL_WORKERS > 1: one SharedArrayBuffer table for
 *     every worker thread): consume() per request against the in-process
 *     store's on the same keys, alone and with other threads consuming from
 *     the same table at the same time (each thread's own ns/op);
 *  2. Redis on loopback (a redis-server started here): one consume() round
 *     trip vs one PING round trip, sequential and 100 in flight;
 *  3. the real lookup route (GET /v1/ip/{ip}, keyed pro callers under their
 *     limit) with IPINTEL_RATE_LIMITS=off vs on: (a) the app's fetch handler
 *     called in process (server CPU per request, off vs memory store); (b) over
 *     HTTP, off vs memory vs Redis, one server process per mode. Both
 *     interleave short rounds so load from elsewhere on the machine hits every
 *     mode alike, and report paired ratios.
 *
 *   bun tools/bench/ratelimit.bench.ts [--quick] [--in-process-only]
 *
 * Part 3 builds the test fixture index on first use (about a minute).
 */
import { RedisClient, type Subprocess } from 'bun';
import { availableParallelism, loadavg } from 'node:os';
import { heapStats } from 'bun:jsc';
import { createRateLimiter, type RateLimiter } from '../../src/http/ratelimit/limiter.ts';
import { MemoryBuckets } from '../../src/http/ratelimit/memory-store.ts';
import { allocateSharedBuckets, type SharedBucketsMemory } from '../../src/http/ratelimit/shared-store.ts';
import { bucketKeyFor } from '../../src/http/ratelimit/bucket-key.ts';
import { rateLimitHeaders, shouldSendRateLimitHeaders } from '../../src/http/ratelimit/headers.ts';
import type { RateDecision } from '../../src/http/ratelimit/gcra.ts';
import type { Caller } from '../../src/http/caller.ts';
import { startTestRedis, type TestRedis } from '../../test/ratelimit/fixtures/redis-server.ts';
import { cpuSeconds } from './bench-kit.ts';

const QUICK = process.argv.includes('--quick');
const KEYS = 10_000;
const keys = Array.from({ length: KEYS }, (_, i) => `key:k_${i.toString(36)}_${(i * 2654435761) >>> 0}`);

let sink = 0;
/** Median ns per operation over `rounds` passes of `n` operations. */
function measure(name: string, n: number, op: (i: number) => unknown, rounds = QUICK ? 11 : 31): number {
  for (let i = 0; i < n * 3; i++) op(i % n); // warm-up: JIT
  const perOp: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = Bun.nanoseconds();
    for (let i = 0; i < n; i++) if (op(i)) sink++;
    perOp.push((Bun.nanoseconds() - t0) / n);
  }
  perOp.sort((a, b) => a - b);
  const median = perOp[perOp.length >> 1];
  console.log(`  ${name.padEnd(52)} ${median.toFixed(1).padStart(8)} ns/op   p90 ${perOp[Math.floor(perOp.length * 0.9)].toFixed(1)} ns/op`);
  return median;
}

const ratio = (label: string, a: number, b: number) => console.log(`  ratio ${label.padEnd(46)} ${(a / b).toFixed(2)}x`);

function inProcess(): void {
  console.log(`\n1. In process, memory store (${KEYS} distinct keyed callers, pro tier, under the limit)`);
  const map = new Map<string, number>();
  const baseline = measure('baseline: Map get + set of the same keys', KEYS, (i) => {
    const k = keys[i];
    map.set(k, (map.get(k) ?? 0) + 1);
  });
  // A fresh limiter per round would refill; instead the pro budget (600) exceeds the
  // requests each key receives here (≈ (3 + rounds) per key), so every call is admitted.
  const limiter = createRateLimiter({ store: 'memory' });
  let refused = 0;
  const consume = measure('limiter.consume(key, tier) (Date.now clock)', KEYS, (i) => {
    const d = limiter.consume(keys[i], 'pro') as RateDecision;
    if (!d.allowed) refused++;
    return d.allowed;
  });
  const callers: Caller[] = keys.map((k, i) => ({ ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, tier: 'anonymous', keyId: null, userId: null }));
  const v6: Caller[] = keys.map((_, i) => ({ ip: `2001:db8:${i.toString(16)}::${(i * 7).toString(16)}`, tier: 'anonymous', keyId: null, userId: null }));
  const keyV4 = measure('bucketKeyFor(anonymous IPv4 caller)', KEYS, (i) => bucketKeyFor(callers[i]).length);
  const keyV6 = measure('bucketKeyFor(anonymous IPv6 caller, /64)', KEYS, (i) => bucketKeyFor(v6[i]).length);
  const keyed: Caller[] = keys.map((k) => ({ ip: '192.0.2.1', tier: 'pro', keyId: k.slice(4), userId: 'u' }));
  const limiter2 = createRateLimiter({ store: 'memory' });
  const perRequest = measure('whole per-request path (key, consume, header rule, headers)', KEYS, (i) => {
    const d = limiter2.consume(bucketKeyFor(keyed[i]), 'pro') as RateDecision;
    return shouldSendRateLimitHeaders(200, 'no-store') ? rateLimitHeaders(d)['X-RateLimit-Remaining'] : d.allowed;
  });
  if (refused > 0) console.log(`  (warning: ${refused} refusals; the measurement left the under-limit regime)`);
  ratio('consume / baseline Map get+set', consume, baseline);
  ratio('whole per-request path / baseline', perRequest, baseline);
  console.log(`  (bucketKeyFor IPv4 ${keyV4.toFixed(1)} ns, IPv6 ${keyV6.toFixed(1)} ns)`);

  // Memory per bucket: fill a store to its bound with distinct keys. Heap plus
  // memory outside it (typed-array backing stores), after full collections.
  const n = QUICK ? 100_000 : 250_000;
  const used = () => {
    Bun.gc(true);
    Bun.gc(true);
    const h = heapStats();
    return h.heapSize + h.extraMemorySize;
  };
  const m0 = used();
  const names = Array.from({ length: n }, (_, i) => `ip:10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
  const m1 = used();
  const store = new MemoryBuckets(n);
  const now = Date.now();
  for (let i = 0; i < n; i++) store.consume(names[i], 'anonymous', now);
  const m2 = used();
  console.log(`  memory at ${n} buckets: structure ${((m2 - m1) / 1e6).toFixed(1)} MB (${((m2 - m1) / n).toFixed(0)} B/bucket) + key strings it keeps alive ${((m1 - m0) / 1e6).toFixed(1)} MB (${((m1 - m0) / n).toFixed(0)} B/key)`);
  sink += store.size;
}

/** Shared buckets: one thread alone against the in-process store, then `threads` threads on one table at once. */
async function sharedBuckets(): Promise<void> {
  console.log(`\n1b. Shared buckets (workers: one SharedArrayBuffer table, Atomics group locks), ${KEYS} keyed callers, pro tier, under the limit`);
  const memory = createRateLimiter({ store: 'memory' });
  const inProcess = measure('in-process buckets: limiter.consume', KEYS, (i) => (memory.consume(keys[i], 'pro') as RateDecision).allowed);
  const table = allocateSharedBuckets(250_000);
  const shared = createRateLimiter({ store: 'memory', shared: table });
  const alone = measure('shared buckets: limiter.consume, one thread', KEYS, (i) => (shared.consume(keys[i], 'pro') as RateDecision).allowed);
  ratio('shared / in-process', alone, inProcess);
  for (const threads of [2, 4]) {
    const each = await contended(table, threads);
    console.log(`  shared buckets, ${threads} threads at once: ${each.map((x) => x.toFixed(1)).join(' / ')} ns/op per thread (${availableParallelism()} CPUs)`);
  }
}

/** Each of `threads` worker threads consumes the same keys from one table at once; their ns/op. */
async function contended(table: SharedBucketsMemory, threads: number): Promise<number[]> {
  const limiterUrl = new URL('../../src/http/ratelimit/limiter.ts', import.meta.url).pathname;
  const source = `
    import { createRateLimiter } from ${JSON.stringify(limiterUrl)};
    self.onmessage = (e) => {
      const { table, keys, rounds } = e.data;
      const limiter = createRateLimiter({ store: 'memory', shared: table });
      for (let i = 0; i < keys.length; i++) limiter.consume(keys[i], 'pro');
      const t0 = Bun.nanoseconds();
      for (let r = 0; r < rounds; r++) for (let i = 0; i < keys.length; i++) limiter.consume(keys[i], 'pro');
      postMessage((Bun.nanoseconds() - t0) / (rounds * keys.length));
    };`;
  const url = URL.createObjectURL(new Blob([source], { type: 'application/typescript' }));
  const rounds = QUICK ? 5 : 20;
  const workers = Array.from({ length: threads }, () => new Worker(url));
  try {
    return await Promise.all(
      workers.map(
        (w) =>
          new Promise<number>((resolve) => {
            w.onmessage = (e) => resolve(e.data as number);
            w.postMessage({ table, keys, rounds });
          }),
      ),
    );
  } finally {
    for (const w of workers) w.terminate();
  }
}

async function redisLoopback(redis: TestRedis): Promise<void> {
  const n = QUICK ? 2_000 : 10_000;
  console.log(`\n2. Redis on loopback (redis-server ${redis.url}, ${n} operations)`);
  const client = new RedisClient(redis.url);
  await client.connect();
  const limiter = createRateLimiter({ store: redis.url });
  // Pro keys spread so each takes < 600 requests: every call admitted.
  const rkeys = Array.from({ length: Math.ceil(n / 100) }, (_, i) => `bench-${i}`);
  for (let i = 0; i < 200; i++) {
    await client.send('PING', []);
    await limiter.consume(rkeys[i % rkeys.length], 'pro');
  }
  const seq = async (op: (i: number) => Promise<unknown>) => {
    const t0 = Bun.nanoseconds();
    for (let i = 0; i < n; i++) await op(i);
    return (Bun.nanoseconds() - t0) / n;
  };
  const inFlight = async (op: (i: number) => Promise<unknown>, depth = 100) => {
    let next = 0;
    const t0 = Bun.nanoseconds();
    await Promise.all(
      Array.from({ length: depth }, async () => {
        while (next < n) await op(next++);
      }),
    );
    return (Bun.nanoseconds() - t0) / n;
  };
  const rounds = QUICK ? 3 : 5;
  const med = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1];
  const pingSeq: number[] = [], rlSeq: number[] = [], pingPar: number[] = [], rlPar: number[] = [];
  for (let r = 0; r < rounds; r++) {
    pingSeq.push(await seq(() => client.send('PING', [])));
    rlSeq.push(await seq((i) => limiter.consume(rkeys[i % rkeys.length], 'pro') as Promise<RateDecision>));
    pingPar.push(await inFlight(() => client.send('PING', [])));
    rlPar.push(await inFlight((i) => limiter.consume(rkeys[i % rkeys.length], 'pro') as Promise<RateDecision>));
    await client.send('FLUSHALL', []); // keep every key under its limit between rounds
  }
  const [ps, rs, pp, rp] = [med(pingSeq), med(rlSeq), med(pingPar), med(rlPar)];
  console.log(`  baseline: PING round trip, one at a time          ${(ps / 1000).toFixed(1).padStart(8)} µs/op`);
  console.log(`  consume() via EVALSHA, one at a time              ${(rs / 1000).toFixed(1).padStart(8)} µs/op`);
  console.log(`  baseline: PING, 100 in flight                     ${(pp / 1000).toFixed(2).padStart(8)} µs/op  (${(1e9 / pp).toFixed(0)} ops/s)`);
  console.log(`  consume(), 100 in flight                          ${(rp / 1000).toFixed(2).padStart(8)} µs/op  (${(1e9 / rp).toFixed(0)} ops/s)`);
  ratio('consume / PING, sequential', rs, ps);
  ratio('consume / PING, 100 in flight', rp, pp);
  limiter.close();
  client.close();
}

/** Role of the child process: the real server over the fixture index, with 1000 pro keys written to keysFile. */
async function serve(keysFile: string): Promise<void> {
  const { startTestServer } = await import('../../test/helpers/test-server.ts');
  const env: Record<string, string> = { IPINTEL_RATE_LIMITS: process.env.BENCH_LIMITS ?? 'on' };
  if (process.env.BENCH_STORE) env.IPINTEL_RATE_LIMIT_STORE = process.env.BENCH_STORE;
  const server = await startTestServer(env);
  const secrets: string[] = [];
  for (let i = 0; i < 1000; i++) secrets.push((await server.services.accounts.grantKeyByEmail(`bench${i}@example.test`, 'pro', 'bench')).created.secret);
  await Bun.write(keysFile, JSON.stringify(secrets));
  console.log(`PORT ${server.port}`);
}

async function startServerProcess(limits: string, store: string | null): Promise<{ port: number; secrets: string[]; proc: Subprocess }> {
  const keysFile = `/tmp/ipintel-bench-keys-${process.pid}-${Math.random().toString(36).slice(2)}.json`;
  const env: Record<string, string> = { ...(process.env as Record<string, string>), BENCH_LIMITS: limits };
  if (store) env.BENCH_STORE = store;
  const proc = Bun.spawn(['bun', import.meta.path, '--serve', keysFile], { env, stdout: 'pipe', stderr: 'inherit' });
  const reader = proc.stdout.getReader();
  let text = '';
  while (!/PORT (\d+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error('bench server exited before listening');
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const secrets = JSON.parse(await Bun.file(keysFile).text()) as string[];
  return { port: Number(/PORT (\d+)/.exec(text)![1]), secrets, proc };
}

/** Requests per second against GET /v1/ip/{ip} for `ms`, 64 in flight, keys round-robin. */
async function drive(port: number, secrets: string[], ms: number): Promise<{ rps: number; statuses: Map<number, number> }> {
  const ips = Array.from({ length: 256 }, (_, i) => `${(i * 37) % 223 + 1}.${(i * 91) % 256}.${(i * 53) % 256}.${i}`);
  const statuses = new Map<number, number>();
  let done = 0;
  let i = 0;
  const end = performance.now() + ms;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (performance.now() < end) {
        const k = i++;
        const r = await fetch(`http://127.0.0.1:${port}/v1/ip/${ips[k & 255]}`, { headers: { 'x-api-key': secrets[k % secrets.length] } });
        await r.arrayBuffer();
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        done++;
      }
    }),
  );
  return { rps: done / ((performance.now() - t0) / 1000), statuses };
}

/**
 * The real fetch handler (src/http/server.ts) called in process, no network:
 * µs of server work per keyed lookup with limiting off vs on (memory), paired
 * rounds. Isolates the server's CPU cost from the HTTP client's.
 */
async function lookupHandler(): Promise<void> {
  const { startTestServer } = await import('../../test/helpers/test-server.ts');
  const { createApp } = await import('../../src/http/app.ts');
  const { createFetchHandler } = await import('../../src/http/server.ts');
  const n = QUICK ? 1000 : 2000;
  const rounds = QUICK ? 5 : 21;
  console.log(`\n3a. Lookup route in process: the app's fetch handler on GET /v1/ip/{ip}, 1000 pro keys under their limit, ${rounds} rounds of ${n} requests per mode (process CPU time)`);
  // The middle mode isolates the limiter from what the app does around it (usage
  // counting, the await): a limiter that admits everything without any bucket.
  const admitAll: RateLimiter = {
    store: 'memory',
    consume: (_key, tier) => ({ allowed: true, limit: 600, remaining: 599, resetAt: 0, retryAfter: 0, tier }),
    bucketCount: () => 0,
    close: () => {},
  };
  const modes: Array<[string, Record<string, string>, RateLimiter | undefined]> = [
    ['off (baseline)', { IPINTEL_RATE_LIMITS: 'off' }, undefined],
    ['on, admit-all limiter', {}, admitAll],
    ['on, memory store', {}, undefined],
  ];
  const setups: Array<{ srv: Awaited<ReturnType<typeof startTestServer>>; secrets: string[]; handle: ReturnType<typeof createFetchHandler> }> = [];
  for (const [, env, limiter] of modes) {
    const srv = await startTestServer(env, limiter ? { limiter } : {});
    const secrets: string[] = [];
    for (let i = 0; i < 1000; i++) secrets.push((await srv.services.accounts.grantKeyByEmail(`bench${i}@example.test`, 'pro', 'bench')).created.secret);
    setups.push({ srv, secrets, handle: createFetchHandler(srv.services, createApp(srv.services)) });
  }
  const ips = Array.from({ length: 256 }, (_, i) => `${((i * 37) % 223) + 1}.${(i * 91) % 256}.${(i * 53) % 256}.${i}`);
  let k = 0;
  // CPU time of this process, not wall time: other work on the machine then moves it less.
  const cpuUs = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  const run = async (m: number) => {
    const { handle, secrets } = setups[m];
    const t0 = cpuUs();
    for (let i = 0; i < n; i++, k++) {
      const res = await handle(new Request(`http://127.0.0.1/v1/ip/${ips[k & 255]}`, { headers: { 'x-api-key': secrets[k % 1000] } }), null);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`bench request answered ${res.status}`);
    }
    return (cpuUs() - t0) / n;
  };
  for (let m = 0; m < modes.length; m++) await run(m);
  const us: number[][] = modes.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < modes.length; j++) {
      const m = (j + r) % modes.length;
      us[m].push(await run(m));
    }
  }
  for (const { srv } of setups) await srv.stop();
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  for (let m = 0; m < modes.length; m++) {
    const paired = us[m].map((x, r) => x / us[0][r]);
    console.log(`  ${modes[m][0].padEnd(22)} ${med(us[m]).toFixed(1).padStart(7)} µs CPU/request median (${(1e6 / med(us[m])).toFixed(0)} req/s per core)   median paired ratio to off ${med(paired).toFixed(3)}`);
  }
}

async function lookupRoute(redis: TestRedis | null): Promise<void> {
  const windowMs = QUICK ? 500 : 700;
  const rounds = QUICK ? 5 : 21;
  console.log(`\n3b. Lookup route over HTTP: GET /v1/ip/{ip}, real server (fixture index), 1000 pro keys under their limit, 64 in flight;`);
  console.log(`   one server per mode, ${rounds} rounds of ${windowMs} ms windows interleaved (order rotated each round)`);
  const modes: Array<[string, string, string | null]> = [
    ['off (baseline)', 'off', null],
    ['on, memory store', 'on', null],
  ];
  if (redis) modes.push(['on, Redis store', 'on', redis.url]);
  const servers = await Promise.all(modes.map(([, limits, store]) => startServerProcess(limits, store)));
  const rps: number[][] = modes.map(() => []);
  // Server CPU per request (and Redis's, in Redis mode): steadier than req/s on a busy machine.
  const cpu = modes.map(() => ({ server: 0, redis: 0, requests: 0 }));
  try {
    for (const srv of servers) await drive(srv.port, srv.secrets, 500); // warm-up
    for (let r = 0; r < rounds; r++) {
      for (let j = 0; j < modes.length; j++) {
        const m = (j + r) % modes.length;
        const s0 = cpuSeconds(servers[m].proc.pid) * 1e6;
        const r0 = modes[m][2] && redis ? cpuSeconds(redis.pid) * 1e6 : 0;
        const t0 = performance.now();
        const { rps: x, statuses } = await drive(servers[m].port, servers[m].secrets, windowMs);
        const requests = Math.round((x * (performance.now() - t0)) / 1000);
        cpu[m].server += cpuSeconds(servers[m].proc.pid) * 1e6 - s0;
        if (modes[m][2] && redis) cpu[m].redis += cpuSeconds(redis.pid) * 1e6 - r0;
        cpu[m].requests += requests;
        const non200 = [...statuses].filter(([code]) => code !== 200);
        if (non200.length > 0) console.log(`  (warning: ${modes[m][0]} answered ${JSON.stringify(non200)} besides 200)`);
        rps[m].push(x);
      }
    }
  } finally {
    for (const srv of servers) srv.proc.kill('SIGTERM');
    await Promise.all(servers.map((srv) => srv.proc.exited));
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  for (let m = 0; m < modes.length; m++) {
    // Paired ratios: each round's window against the baseline's window of the same round.
    const paired = rps[m].map((x, r) => x / rps[0][r]);
    const lo = Math.min(...rps[m]).toFixed(0);
    const hi = Math.max(...rps[m]).toFixed(0);
    console.log(`  ${modes[m][0].padEnd(20)} ${med(rps[m]).toFixed(0).padStart(7)} req/s median (range ${lo}-${hi})   median paired ratio to off ${med(paired).toFixed(3)}`);
  }
  const base = cpu[0].server / cpu[0].requests;
  for (let m = 0; m < modes.length; m++) {
    const per = cpu[m].server / cpu[m].requests;
    const redisPart = cpu[m].redis > 0 ? `, plus Redis ${(cpu[m].redis / cpu[m].requests).toFixed(1)} µs` : '';
    console.log(`  ${modes[m][0].padEnd(20)} server CPU ${per.toFixed(1).padStart(6)} µs/request (ratio to off ${(per / base).toFixed(3)})${redisPart}   [${cpu[m].requests} requests]`);
  }
}

if (process.argv[2] === '--serve') {
  await serve(process.argv[3]);
} else {
  console.log(`ipintel rate-limit benchmark (bun ${Bun.version}${QUICK ? ', quick' : ''}; ${availableParallelism()} CPUs, load average ${loadavg().map((x) => x.toFixed(1)).join(' ')} at start)`);
  inProcess();
  await sharedBuckets();
  if (process.argv.includes('--in-process-only')) process.exit(0);
  let redis: TestRedis | null = null;
  try {
    redis = await startTestRedis();
  } catch (e) {
    console.log(`\n2. Redis: skipped (${(e as Error).message})`);
  }
  try {
    if (redis) await redisLoopback(redis);
    await lookupHandler();
    await lookupRoute(redis);
  } finally {
    await redis?.kill();
  }
  console.log(`\nload average at end ${loadavg().map((x) => x.toFixed(1)).join(' ')} (other work on the machine widens every range above; compare the ratios)`);
  if (sink === -1) console.log(sink);
}
