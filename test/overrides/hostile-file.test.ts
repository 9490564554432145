/**
 * The overrides file as a careless operator or an attacker with write access
 * to its folder leaves it (issue 36), against the real server with two
 * workers on 127.0.0.1: a FIFO in its place is refused without blocking any
 * thread; a large file is read once per host, off the serving threads, so
 * /health answers while it loads; a file whose table would not fit the
 * memory budget is refused with the reason; a prefix with host bits set is
 * a bad line named by file and line, and a load says what space it covers.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OverrideColumns, OverrideTable } from '../../src/lookup/overrides/table.ts';
import { ENTRY_BYTES, memoryBudget } from '../../src/memory-budget.ts';
import { readRegularFile } from '../../src/file-io/read-regular-file.ts';
import { spawnServer, type SpawnedServer } from '../helpers/spawned-server.ts';

const ADMIN = 'overrides-hostile-admin';
const dir = mkdtempSync(join(tmpdir(), 'ipintel-overrides-hostile-'));
const BASE = 'cidr,country_code,note\n198.51.100.0/24,NL,office\n';

const reload = async (s: SpawnedServer) => {
  const r = await fetch(`${s.url}/reload`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` }, signal: AbortSignal.timeout(60_000) });
  return (await r.json()) as { overrides: Record<string, any> };
};
const countryOf = async (s: SpawnedServer, ip: string) => ((await (await fetch(`${s.url}/v1/ip/${ip}`, { signal: AbortSignal.timeout(10_000) })).json()) as any).location?.country_code ?? null;
const health = async (s: SpawnedServer) => (await fetch(`${s.url}/health`, { signal: AbortSignal.timeout(10_000) })).status;

/** Waits (bounded) until a log line matches. */
async function logged(s: SpawnedServer, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const line = s.log.find((l) => pattern.test(l));
    if (line !== undefined) return line;
    if (Date.now() > end) throw new Error(`no log line ${pattern} within ${timeoutMs} ms:\n${s.log.slice(-20).join('\n')}`);
    await Bun.sleep(100);
  }
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('reading the file', () => {
  test('a FIFO, a folder and an oversized file are refused on the opened descriptor, without blocking', () => {
    const fifo = join(dir, 'unit.fifo');
    expect(Bun.spawnSync(['mkfifo', fifo]).exitCode).toBe(0);
    // With no writer, a blocking open of a FIFO never returns: this test would time out.
    expect(() => readRegularFile(fifo, 1 << 20)).toThrow(/is not a regular file \(a FIFO\)/);
    mkdirSync(join(dir, 'unit.dir'));
    expect(() => readRegularFile(join(dir, 'unit.dir'), 1 << 20)).toThrow(/is not a regular file \(a folder\)/);
    writeFileSync(join(dir, 'unit.big'), 'x'.repeat(2048));
    expect(() => readRegularFile(join(dir, 'unit.big'), 1024)).toThrow(/is 2048 bytes, over the limit of 1024/);
    expect(readRegularFile(join(dir, 'unit.big'), 4096).length).toBe(2048);
  });

  test('the table costs its columns, one interval and the pooled text per entry, all in shared memory', () => {
    const n = 50_000;
    const columns = new OverrideColumns();
    const note = (i: number) => `note of entry ${String(i).padStart(8, '0')} with some words`;
    for (let i = 0; i < n; i++) columns.add({ family: 4, start: 0x0a000000 + i * 4, end: 0x0a000000 + i * 4 + 3, len: 30, fields: Object.freeze({ note: note(i) }), line: i + 2 });
    const { table } = OverrideTable.fromColumns(columns);
    const text = JSON.stringify({ note: note(0) }).length;
    // Per entry: the documented fixed cost, the field set's JSON text and its 4-byte offset.
    expect(table.byteLength / n).toBeLessThanOrEqual(ENTRY_BYTES.overrideEntry + text + 4 + 1);
    const parts = table.toParts();
    for (const a of [parts.pool.bytes, parts.pool.offsets, parts.set, parts.len, parts.family, parts.startOf, parts.v4.starts, parts.v4.ends, parts.v4.entries]) expect(a.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(OverrideTable.fromParts(parts).find('10.0.0.9')?.fields.note).toBe(note(2));
  });
});

describe('two workers, no memory budget', () => {
  const path = join(dir, 'overrides.csv');
  let server: SpawnedServer;

  beforeAll(async () => {
    writeFileSync(path, BASE);
    server = await spawnServer({ IPINTEL_WORKERS: '2', IPINTEL_OVERRIDES: path, IPINTEL_ADMIN_TOKEN: ADMIN });
  }, 60_000);
  afterAll(() => server?.stop());

  test('a prefix with host bits set is a bad line named by file and line; the load says what it covers', async () => {
    writeFileSync(path, `${BASE}203.0.113.7/1,DE,typo of a /32\n2001:db8::/32,FR,lab\n`);
    const o = (await reload(server)).overrides;
    expect(o).toMatchObject({ applied: true, entries: 2, bad_lines: 1 });
    expect(o.covers.ipv4_addresses).toBe(256);
    expect(o.covers.ipv4_share).toBe(256 / 2 ** 32);
    expect(o.covers.ipv6_share).toBe(2 ** 96 / 2 ** 128);
    await logged(server, new RegExp(`overrides: ${path}:3: cidr 203\\.0\\.113\\.7/1 has host bits set: the prefix is 128\\.0\\.0\\.0/1, the address alone is 203\\.0\\.113\\.7/32`));
    await logged(server, /overrides: .*: 2 entries applied .*covering 256 IPv4 addresses/);
    // Half the IPv4 space is not overridden.
    expect(await countryOf(server, '150.0.0.1')).not.toBe('DE');
    expect(await countryOf(server, '198.51.100.7')).toBe('NL');
  });

  test('a large file is read once per host, off the serving threads: /health answers while it loads', async () => {
    const n = 200_000;
    const lines = [BASE.trimEnd()];
    for (let i = 0; i < n; i++) lines.push(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255},JP,`);
    writeFileSync(path, lines.join('\n') + '\n');
    const before = server.log.length;
    let done = false;
    const reloaded = reload(server).finally(() => (done = true));
    let answered = 0;
    while (!done) {
      expect(await health(server)).toBe(200);
      if (!done) answered++;
    }
    expect((await reloaded).overrides).toMatchObject({ applied: true, entries: n + 1 });
    // Blocked serving threads answer nothing until the load ends.
    expect(answered).toBeGreaterThanOrEqual(3);
    // Parsed once for the host (the primary's line), not once per worker.
    expect(server.log.slice(before).filter((l) => l.includes(`${n + 1} entries applied`))).toHaveLength(1);
    expect(await countryOf(server, '10.1.2.3')).toBe('JP');
  }, 120_000);

  test('a FIFO in place of the file is refused at the next poll; every worker goes on answering', async () => {
    writeFileSync(path, BASE);
    expect((await reload(server)).overrides.applied).toBe(true);
    rmSync(path);
    expect(Bun.spawnSync(['mkfifo', path]).exitCode).toBe(0);
    await logged(server, /overrides: refused, the 1 entries in force stay: .*is not a regular file \(a FIFO\)/);
    for (let i = 0; i < 8; i++) expect(await health(server)).toBe(200);
    expect(await countryOf(server, '198.51.100.7')).toBe('NL');
    const o = (await reload(server)).overrides;
    expect(o.applied).toBe(false);
    expect(o.refused).toMatch(/is not a regular file \(a FIFO\): only a regular file is read/);
    expect(server.alive()).toBe(true);
  }, 60_000);
});

describe('IPINTEL_MEMORY_MB=256', () => {
  const path = join(dir, 'budget.csv');
  let server: SpawnedServer;

  beforeAll(async () => {
    writeFileSync(path, BASE);
    server = await spawnServer({ IPINTEL_WORKERS: '2', IPINTEL_MEMORY_MB: '256', IPINTEL_OVERRIDES: path, IPINTEL_ADMIN_TOKEN: ADMIN });
  }, 60_000);
  afterAll(() => server?.stop());

  test('a file whose table would not fit the overrides share is refused with the reason; the overrides in force stay', async () => {
    const share = memoryBudget(256).overridesBytes;
    // Each line its own note: ~100 bytes an entry, well over the share.
    const n = Math.ceil(share / 60);
    const lines = ['cidr,note'];
    for (let i = 0; i < n; i++) lines.push(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255},the note of line ${i} says something of its own`);
    writeFileSync(path, lines.join('\n') + '\n');
    const o = (await reload(server)).overrides;
    expect(o.applied).toBe(false);
    expect(o.refused).toMatch(new RegExp(`would hold (?:more than [\\d.]+ MiB by line \\d+|[\\d.]+ MiB), over the ${(share / 1048576).toFixed(1)} MiB the memory budget gives the overrides \\(IPINTEL_MEMORY_MB`));
    expect(o.entries).toBe(1);
    expect(await countryOf(server, '198.51.100.7')).toBe('NL');
    expect(await countryOf(server, '10.0.0.1')).toBeNull();
  }, 120_000);
});
