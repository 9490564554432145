/**
 * What the HTTP benchmarks share: starting a target server process, a wrk
 * run against it (throughput, latency and the server's own CPU time per
 * request, from /proc), and the random-address wrk script.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withStartDefaults } from '../start-env.ts';
import { cpuSeconds, treeCpuSeconds } from './bench-kit.ts';

/** Load generator settings: connections and seconds. */
export interface WrkOptions {
  connections: number;
  duration: number;
  /** CPUs wrk may run on (taskset -c list), to keep it off the server's cores; unset: any. */
  cpus?: string | null;
  /**
   * Count the CPU of the server's child processes too (nginx's workers) and, after the run, wait until
   * they are all idle and count that CPU as well (settle). Off for a server whose child is other work
   * (a refresh build).
   */
  serverTree?: boolean;
}

export interface Target {
  name: string;
  child: ChildProcess;
  port: number;
}

/**
 * Starts a target process (http-target.ts of this checkout, or `script`) and
 * waits for the port it prints; `env` adds variables for this target only.
 */
export function startTarget(name: string, args: string[], script = join(import.meta.dir, 'http-target.ts'), env: Record<string, string> = {}, cpus: string | null = null): Promise<Target> {
  // Every target (the baseline too) runs with the environment `bun run start` sets (MIMALLOC_PURGE_DELAY).
  // taskset execs the server, so the child's pid stays the server's (its CPU time is read from /proc).
  const argv = cpus ? ['taskset', '-c', cpus, process.execPath, script, ...args] : [process.execPath, script, ...args];
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'], env: { ...withStartDefaults(process.env), ...env } });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /^(\d+)\n/.exec(out);
      if (m) resolve({ name, child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`${name} exited with ${code} before listening`)));
  });
}

/**
 * A wrk Lua script asking for `prefix<random IPv4>suffix`, seeded so every run asks the same sequence;
 * `headers`: Lua source defining `local function headers()` (xffHeaders, apiKeyHeaders) for each request's headers.
 */
export function randomIpScript(prefix: string, suffix: string, headers: string | null = null): string {
  return `
math.randomseed(42)
${headers ?? ''}
request = function()
  local ip = math.random(1, 223) .. "." .. math.random(0, 255) .. "." .. math.random(0, 255) .. "." .. math.random(1, 254)
  return wrk.format("GET", "${prefix}" .. ip .. "${suffix}"${headers ? ', headers()' : ''})
end
`;
}

/**
 * randomIpScript headers: X-Forwarded-For names one of `callers` distinct IPv4 callers at random on each
 * request (for a server that trusts loopback as its proxy): enough of them and each stays under its limit.
 */
export function xffHeaders(callers: number): string {
  return `local function headers()
  local c = math.random(0, ${callers - 1})
  return { ["X-Forwarded-For"] = "100." .. math.floor(c / 65536) % 256 .. "." .. math.floor(c / 256) % 256 .. "." .. c % 256 }
end`;
}

/** randomIpScript headers: the API keys in X-API-Key, round-robin. */
export function apiKeyHeaders(keys: string[]): string {
  if (keys.some((k) => !/^[\w.-]+$/.test(k))) throw new Error('apiKeyHeaders: a key has characters a Lua string literal would need escaped');
  return `local keys = { ${keys.map((k) => `"${k}"`).join(', ')} }
local next_key = 0
local function headers()
  next_key = next_key % #keys + 1
  return { ["X-API-Key"] = keys[next_key] }
end`;
}

/** A wrk Lua script asking for `/v1/asn/AS<n>` with random 16-bit ASNs (known and unknown alike), seeded like randomIpScript. */
export function randomAsnScript(): string {
  return `
math.randomseed(42)
request = function()
  return wrk.format("GET", "/v1/asn/AS" .. math.random(1, 65535))
end
`;
}

export interface WrkResult {
  rps: number;
  requests: number;
  /** Server CPU microseconds per request during the run. */
  cpuUsPerReq: number;
  p50ms: number;
  p99ms: number;
  errors: number;
  non2xx: number;
}

const toMs = (v: string, unit: string) => Number(v) * ({ us: 0.001, ms: 1, s: 1000 }[unit] ?? NaN);

/**
 * Waits (up to 5 s) until the process tree of `pid` is idle (under 5 % of a core over 250 ms): a server
 * that goes on working after the load (flushing usage counters, collecting) would otherwise slow the next run.
 */
function settle(pid: number): void {
  for (let i = 0; i < 20; i++) {
    const c0 = treeCpuSeconds(pid);
    Bun.sleepSync(250);
    if (treeCpuSeconds(pid) - c0 < 0.0125) return;
  }
}

/** Runs wrk against a URL (with an optional Lua script) and parses its report; `pid` is the server's (see WrkOptions.serverTree). */
export function wrk(url: string, args: WrkOptions, script: string | null, pid: number): WrkResult {
  const argv = ['-t1', `-c${args.connections}`, `-d${args.duration}s`, '--latency'];
  const cpuOf = args.serverTree ? treeCpuSeconds : cpuSeconds;
  const run = () => {
    const cpu0 = cpuOf(pid);
    const r = args.cpus ? spawnSync('taskset', ['-c', args.cpus, 'wrk', ...argv, url], { encoding: 'utf8' }) : spawnSync('wrk', [...argv, url], { encoding: 'utf8' });
    if (args.serverTree) settle(pid);
    return { r, cpu: cpuOf(pid) - cpu0 };
  };
  const { r, cpu } = script === null ? run() : withScriptFile(script, (path) => (argv.push('-s', path), run()));
  if (r.error) throw new Error(`wrk failed to run (${r.error.message}); install it with apt-get install wrk`);
  const text = r.stdout;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1]);
  const lat = (p: string) => {
    const m = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(text);
    return m ? toMs(m[1], m[2]) : NaN;
  };
  const errs = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0);
  const requests = Number(/(\d+) requests in/.exec(text)?.[1]);
  if (!Number.isFinite(rps) || !Number.isFinite(requests)) throw new Error(`could not parse wrk output:\n${text}\n${r.stderr}`);
  return { rps, requests, cpuUsPerReq: (cpu * 1e6) / requests, p50ms: lat('50'), p99ms: lat('99'), errors: errs ? errs.slice(1).reduce((a, b) => a + Number(b), 0) : 0, non2xx };
}

/**
 * Runs `use` with `script` written to a temp file (written before `use` runs,
 * removed after it, whatever it does).
 */
export function withScriptFile<T>(script: string, use: (path: string) => T): T {
  const path = join(tmpdir(), `ipintel-http-bench-${process.pid}-${Math.random().toString(36).slice(2)}.lua`);
  writeFileSync(path, script);
  try {
    return use(path);
  } finally {
    rmSync(path, { force: true });
  }
}
