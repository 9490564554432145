/**
 * The nginx + geoip2 baseline of tools/bench/http.bench.ts: nginx (Debian's
 * nginx-light with libnginx-mod-http-geoip2) over this project's own MMDB
 * export of the index being measured, answering `GET /v1/ip/{ip}` with a
 * JSON body shaped like ipintel's `?fields=ip,location,network` answer.
 *
 * What it does per request: takes the address from the URI (a `map $uri`
 * regex capture), one MMDB lookup of it (the module looks an address up
 * once per database and reads every variable from that result), 26 values
 * read from the record, and a body assembled from them by `map`s (a missing
 * value is `null`, booleans come back as 1/0). How the body differs from
 * ipintel's: `location.timezone` (the offset) is always null (the export
 * stores only the zone's name); strings are not JSON-escaped (nginx has no
 * escaping), so a name holding a quote makes the body invalid JSON, a
 * byte shorter per quote (wrk does not parse bodies; BENCHMARKS.md has how
 * often it happens and how many bodies are byte-identical to ipintel's);
 * `network` is always an object, also for an address the database does not
 * hold (ipintel derives routability from the address itself). nginx also
 * sends `Server` and `Connection` headers; the other headers are ipintel's.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CORS_RESPONSE_HEADERS } from '../../src/http/cors.ts';
import { freePort } from './bench-kit.ts';

/** geoip2 variable -> its path in the export's record (docs/deployment.md, "MMDB export"). */
const LOOKUPS: Array<[string, string]> = [
  ['country_code', 'country iso_code'],
  ['country', 'country names en'],
  ['region', 'subdivisions 0 names en'],
  ['city', 'city names en'],
  ['postal_code', 'postal code'],
  ['latitude', 'location latitude'],
  ['longitude', 'location longitude'],
  ['timezone_name', 'location time_zone'],
  ['asn', 'network asn'],
  ['org', 'network org'],
  ['category', 'network category'],
  ['operator', 'network operator'],
  ['operator_type', 'network operator_type'],
  ['service_name', 'network service_name'],
  ['owner', 'network owner'],
  ['alloc_cidr', 'network allocation cidr'],
  ['alloc_range', 'network allocation range'],
  ['alloc_registry', 'network allocation registry'],
  ['alloc_country', 'network allocation country'],
  ['alloc_status', 'network allocation status'],
  ['alloc_date', 'network allocation date'],
  ['route_status', 'network routability status'],
  ['route_reachable', 'network routability globally_reachable'],
  ['route_reason', 'network routability reason'],
  ['special_use', 'network is_special_use'],
  ['bogon', 'network is_bogon'],
];
/** Where Debian's libnginx-mod-http-geoip2 puts the module (a config of our own does not read modules-enabled/). */
const GEOIP2_MODULE = '/usr/lib/nginx/modules/ngx_http_geoip2_module.so';
const NUMBERS = new Set(['latitude', 'longitude']);
const BOOLEANS = new Set(['route_reachable', 'special_use', 'bogon']);

/** `"name":$j_name, ...` for a JSON object's members (each $j_ variable is already JSON). */
const members = (names: string[], as: (n: string) => string = (n) => n) => names.map((n) => `"${as(n)}":$j_${n}`).join(',');

/** The nginx configuration text (pure: paths and numbers in, text out). */
export function nginxConfig(o: { prefix: string; mmdb: string; port: number; workers: number }): string {
  const g = (n: string) => `$g_${n}`;
  const maps = LOOKUPS.map(([n]) => {
    // geoip2 gives an empty string for a key the record lacks: JSON null, as ipintel answers.
    if (BOOLEANS.has(n)) return `map ${g(n)} $j_${n} { 1 true; 0 false; default null; }`;
    if (NUMBERS.has(n)) return `map ${g(n)} $j_${n} { "" null; default ${g(n)}; }`;
    return `map ${g(n)} $j_${n} { "" null; default '"${g(n)}"'; }`;
  });
  const location = members(['country', 'country_code', 'region', 'city', 'postal_code', 'latitude', 'longitude']) + ',"timezone":null,' + members(['timezone_name']);
  const allocation = members(['alloc_cidr', 'alloc_range', 'alloc_registry', 'alloc_country', 'alloc_status', 'alloc_date'], (n) => n.slice(6));
  const network =
    members(['asn', 'org', 'category', 'operator', 'operator_type', 'service_name', 'owner']) +
    ',"allocation":$j_allocation,"routability":{' +
    members(['route_status', 'route_reachable', 'route_reason'], (n) => ({ route_status: 'status', route_reachable: 'globally_reachable', route_reason: 'reason' })[n]!) +
    '},' +
    members(['special_use', 'bogon'], (n) => `is_${n}`);
  const headers = { ...CORS_RESPONSE_HEADERS, 'cache-control': 'public, max-age=86400' };
  return `# written by tools/bench/nginx-geoip2.ts for one benchmark run
load_module ${GEOIP2_MODULE};
daemon off;
master_process on;
worker_processes ${o.workers};
pid ${o.prefix}/nginx.pid;
error_log ${o.prefix}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  server_tokens off;
  # Bun never closes a keep-alive connection after N requests: neither does this.
  keepalive_requests 100000000;
  client_body_temp_path ${o.prefix}/body;
  proxy_temp_path ${o.prefix}/proxy;
  fastcgi_temp_path ${o.prefix}/fastcgi;
  uwsgi_temp_path ${o.prefix}/uwsgi;
  scgi_temp_path ${o.prefix}/scgi;
  types { }
  default_type "application/json;charset=utf-8";
  map $uri $bench_ip { "~^/v1/ip/([^/]+)$" $1; default ""; }
  geoip2 ${o.mmdb} {
${LOOKUPS.map(([n, path]) => `    ${g(n)} source=$bench_ip ${path};`).join('\n')}
  }
  ${maps.join('\n  ')}
  map "$g_country_code$g_region$g_city$g_latitude$g_timezone_name" $j_location { "" null; default '{${location}}'; }
  map $g_alloc_cidr $j_allocation { "" null; default '{${allocation}}'; }
  server {
    listen 127.0.0.1:${o.port} reuseport;
    location /v1/ip/ {
${Object.entries(headers).map(([k, v]) => `      add_header ${k} "${v}";`).join('\n')}
      return 200 '{"ip":"$bench_ip","location":$j_location,"network":{${network}}}';
    }
  }
}
`;
}

/**
 * The MMDB export of `index` (`bun src/commands/export.ts`), made once per
 * index (named by its size and its first and last 64 KiB in the temp dir:
 * not its mtime, which the test fixture's helper touches on every use)
 * since it takes about a minute on the fixture index.
 */
export function mmdbExportOf(index: string): string {
  const path = join(tmpdir(), `ipintel-bench-export-${indexIdentity(index)}.mmdb`);
  if (existsSync(path)) return path;
  console.error(`exporting ${index} as MMDB for the nginx + geoip2 baseline (once per index; about a minute) ...`);
  const tmp = `${path}.${process.pid}.tmp`;
  // No IPINTEL_OVERRIDES: the ipintel targets run without operator overrides too.
  const env = { ...process.env, IPINTEL_OVERRIDES: '' };
  const r = spawnSync(process.execPath, [join(import.meta.dir, '../../src/cli.ts'), 'export', '--mmdb', tmp, '--index', index], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`MMDB export of ${index} failed (exit ${r.status})`);
  renameSync(tmp, path);
  return path;
}

/** A short name of an index file's contents: its size and a hash of its first and last 64 KiB. */
function indexIdentity(index: string): string {
  const size = statSync(index).size;
  const fd = openSync(index, 'r');
  try {
    const edge = Math.min(size, 65536);
    const head = Buffer.alloc(edge);
    const tail = Buffer.alloc(edge);
    readSync(fd, head, 0, edge, 0);
    readSync(fd, tail, 0, edge, size - edge);
    return `${size.toString(16)}-${Bun.hash(Buffer.concat([head, tail])).toString(16)}`;
  } finally {
    closeSync(fd);
  }
}

/** A running nginx: the master's pid (its workers are its children); `stop` resolves once it has exited and its temp prefix is gone. */
export interface NginxTarget {
  name: string;
  child: ChildProcess;
  port: number;
  stop(): Promise<void>;
}

/** Starts nginx with `workers` worker processes over `mmdb` and waits until it answers JSON. */
export async function startNginx(name: string, mmdb: string, workers: number, cpus: string | null = null): Promise<NginxTarget> {
  const prefix = mkdtempSync(join(tmpdir(), 'ipintel-bench-nginx-'));
  const port = freePort();
  const conf = join(prefix, 'nginx.conf');
  writeFileSync(conf, nginxConfig({ prefix, mmdb, port, workers }));
  const argv = ['nginx', '-p', prefix, '-e', join(prefix, 'error.log'), '-c', conf];
  // taskset execs nginx, so the child's pid is the master's.
  const child = cpus ? spawn('taskset', ['-c', cpus, ...argv], { stdio: 'ignore' }) : spawn(argv[0]!, argv.slice(1), { stdio: 'ignore' });
  let exited: number | null = null;
  let log = '';
  // The prefix goes when nginx has exited (its workers create temp folders in it until then).
  const gone = new Promise<void>((resolve) =>
    child.on('exit', (code) => {
      exited = code ?? -1;
      log = existsSync(join(prefix, 'error.log')) ? readFileSync(join(prefix, 'error.log'), 'utf8') : '';
      rmSync(prefix, { recursive: true, force: true });
      resolve();
    }),
  );
  const stop = () => {
    child.kill('SIGTERM');
    return gone;
  };
  for (let i = 0; i < 200 && exited === null; i++) {
    let res: Response;
    try {
      res = await fetch(`http://127.0.0.1:${port}/v1/ip/8.8.8.8`);
    } catch {
      await Bun.sleep(50); // Not listening yet.
      continue;
    }
    const body = await res.text();
    let json = res.status === 200;
    try {
      JSON.parse(body);
    } catch {
      json = false;
    }
    if (json) return { name, child, port, stop };
    await stop();
    throw new Error(`nginx (${name}) answered ${res.status} with other than JSON: ${body.slice(0, 500)}\n${log}`);
  }
  await stop();
  throw new Error(`nginx (${name}) did not answer (exit ${exited}); install nginx-light and libnginx-mod-http-geoip2\n${log}`);
}
