/**
 * `bun run lookup`: the same v1 bytes as the HTTP route for the same
 * address (whole object and projections), and the command's exit codes.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import { resolve } from 'node:path';
import type { RunningServer } from '../../src/host/start-server.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { OfflineLookup, parseFields } from '../../src/commands/lookup/answer.ts';

const ROOT = resolve(import.meta.dir, '../..');
let server: RunningServer;
let lookup: OfflineLookup;
let indexPath: string;
beforeAll(async () => {
  indexPath = await fixtureIndexPath();
  server = await startTestServer({ IPINTEL_RATE_LIMITS: 'off' });
  lookup = await OfflineLookup.open(indexPath);
}, 120_000);
afterAll(() => server.stop());

const api = async (ip: string, fields?: string) => {
  const res = await fetch(`${server.url}/v1/ip/${encodeURIComponent(ip)}${fields ? `?fields=${fields}` : ''}`);
  expect(res.status).toBe(200);
  return res.text();
};

const FIELD_SETS = [undefined, 'location,network', 'ip,score,classification', 'evidence,decision,scenarios,explanation'];

test('property: for random IPv4 and IPv6 addresses the command prints the route body, byte for byte', async () => {
  const address = fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom('8.8.8.8', '185.220.101.1', '10.1.2.3', '::1', '::ffff:5.101.96.10', '2001:4860:4801:10::1', '66.249.66.1'));
  await fc.assert(
    fc.asyncProperty(address, fc.constantFrom(...FIELD_SETS), async (ip, fields) => {
      expect(lookup.answer(ip, parseFields(fields))).toBe(await api(ip, fields));
    }),
    { numRuns: 400, seed: 21 },
  );
}, 60_000);

test('invalid fields give the API error object; an invalid address gives null', () => {
  expect(() => parseFields('location,nope')).toThrow('Unknown fields: nope');
  expect(lookup.answer('999.1.1.1', null)).toBeNull();
});

/** Runs a command of the repository; returns exit code, stdout, stderr. */
async function run(args: string[], stdin?: string) {
  const proc = Bun.spawn(['bun', ...args], { cwd: ROOT, stdin: stdin === undefined ? 'ignore' : new Blob([stdin]), stdout: 'pipe', stderr: 'pipe', env: { ...process.env, IPINTEL_INDEX: indexPath } });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code: await proc.exited, out, err };
}

test('ipintel lookup <ip> prints the body; an invalid address prints INVALID_IP on stderr and exits 1', async () => {
  const ok = await run(['src/cli.ts', 'lookup', '8.8.8.8', '--fields', 'ip,network']);
  expect(ok.code).toBe(0);
  expect(ok.out).toBe(`${await api('8.8.8.8', 'ip,network')}\n`);
  const bad = await run(['src/cli.ts', 'lookup', 'x.y', '1.1.1.1']);
  expect(bad.code).toBe(1);
  expect(JSON.parse(bad.err)).toEqual({ error: 'Not a valid IPv4 or IPv6 address: x.y', code: 'INVALID_IP', details: { provided: 'x.y' } });
  expect(bad.out).toBe(`${await api('1.1.1.1')}\n`);
  const fields = await run(['src/cli.ts', 'lookup', '1.1.1.1', '--fields', 'nope']);
  expect(fields.code).toBe(2);
  expect(JSON.parse(fields.err).code).toBe('INVALID_FIELDS');
  expect((await run(['src/cli.ts', 'lookup', '--stdin', '1.1.1.1'])).code).toBe(2);
  expect((await run(['src/cli.ts', 'lookup', '--stdin', '--format', 'xml'])).code).toBe(2);
}, 60_000);

test('lookup --stdin streams NDJSON, reports bad lines with their number and goes on', async () => {
  const r = await run(['src/cli.ts', 'lookup', '--stdin', '--fields', 'ip,location,network'], '8.8.8.8\r\nnot-an-ip\n\n2001:4860:4801:10::1\n1.1.1.1');
  expect(r.code).toBe(1);
  expect(r.err).toBe('line 2: not an IP address: "not-an-ip"\n');
  const lines = r.out.trimEnd().split('\n');
  expect(lines).toEqual([await api('8.8.8.8', 'ip,location,network'), await api('2001:4860:4801:10::1', 'ip,location,network'), await api('1.1.1.1', 'ip,location,network')]);
}, 60_000);
