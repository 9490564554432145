/** The history store (src/index/history/store.ts): recording, rebuilding byte for byte, chunks shared between versions, pruning at retention, the recording lock. */
import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordHistoryJob } from '../../src/index/history/job-runner.ts';
import { deferRecording } from '../../src/index/history/deferred-recording.ts';
import { recordServedIndexes } from '../../src/index/history/recorder.ts';
import { IndexHolder } from '../../src/index/holder.ts';
import { HistoryJobs } from '../../src/index/history/jobs.ts';
import { MAX_PENDING_REBUILDS, PastIndexes } from '../../src/index/history/past-indexes.ts';
import { rebuildVersion } from '../../src/index/history/rebuild.ts';
import { FRAME_BYTES, historySizeBytes, pruneHistory, readCatalog, readPacked, recipeName, recordVersion, writeCatalog, writePacked, xxh3Of, type Recipe } from '../../src/index/history/store.ts';
import { storedSegments, TransformKind, transformsWellFormed, untransformingEmitter } from '../../src/index/history/section-transforms.ts';
import { parseIndexBytes } from '../../src/index/map-index-file.ts';
import { ApiError } from '../../src/api-error.ts';
import { parseAt, versionForAt } from '../../src/lookup/past-moment.ts';
import { buildFromTexts } from '../helpers/small-build.ts';

const DAY = 86_400_000;
const root = mkdtempSync(join(tmpdir(), 'ipintel-history-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A list of `n` /24s from 10.0.0.0 on, skipping the `skip`th. */
function cidrs(n: number, skip = -1): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) if (i !== skip) out.push(`10.${(i >> 8) & 255}.${i & 255}.0/24`);
  return `${out.join('\n')}\n`;
}

const build = (name: string, text: string, builtAt: string) => buildFromTexts(root, name, [{ type: 'cidr-list', name: `${name}.txt`, text, options: { category: 'datacenter', provider: 'p' } }], builtAt);

describe('history store', () => {
  test('versions rebuild byte for byte; a version close to the last shares its chunks; the same file again records nothing', async () => {
    const dir = join(root, 'h1');
    const a = await build('a.idx', cidrs(20_000), '2026-11-01T00:00:00Z');
    const b = await build('b.idx', cidrs(20_000, 10_000), '2026-11-02T00:00:00Z');
    const first = recordVersion(dir, a, 1_000);
    const second = recordVersion(dir, b, 2_000);
    expect(first).toMatchObject({ recorded: true, keyframe: true });
    expect(second.recorded).toBe(true);
    expect(second.keyframe).toBe(false);
    expect(second.bytesWritten).toBeLessThan(first.bytesWritten / 2);
    expect(recordVersion(dir, b, 3_000).recorded).toBe(false);
    const catalog = readCatalog(dir);
    expect(catalog.versions.map((v) => v.servedFromMs)).toEqual([1_000, 2_000]);
    for (const [v, original] of [[catalog.versions[0], a], [catalog.versions[1], b]] as const) {
      const out = join(root, `rebuilt-${v.servedFromMs}.idx`);
      rebuildVersion(dir, catalog, v, out);
      expect(Buffer.compare(readFileSync(out), readFileSync(original))).toBe(0);
    }
  }, 60_000);

  test('versions recorded at the same millisecond get packs of their own names (a second pack of one version and moment replaced the first, which other versions read)', async () => {
    const dir = join(root, 'h-same-ms');
    const a = await build('sm-a.idx', cidrs(20_000), '2026-11-01T00:00:00Z');
    const b = await build('sm-b.idx', cidrs(20_000, 7_000), '2026-11-02T00:00:00Z');
    const c = await build('sm-c.idx', cidrs(20_000, 12_000), '2026-11-03T00:00:00Z');
    // a, b, then a again, then c: all served from the same moment (a test clock, or a revert within one millisecond).
    for (const f of [a, b, a, c]) expect(recordVersion(dir, f, 5_000).recorded).toBe(true);
    const catalog = readCatalog(dir);
    expect(Object.keys(catalog.packs).length).toBe(new Set(Object.keys(catalog.packs)).size);
    expect(readdirSync(dir).filter((n) => n.endsWith('.pack')).length).toBe(Object.keys(catalog.packs).length);
    for (const [i, original] of [a, b, a, c].entries()) {
      const out = join(root, `sm-rebuilt-${i}.idx`);
      rebuildVersion(dir, catalog, catalog.versions[i], out);
      expect(Buffer.compare(readFileSync(out), readFileSync(original))).toBe(0);
    }
  }, 60_000);

  test('pruning drops versions whose service ended before the retention, and the files only they needed', async () => {
    const dir = join(root, 'h2');
    const t = Date.parse('2026-10-01T00:00:00Z');
    const files = [
      await build('p1.idx', cidrs(50), '2026-10-01T00:00:00Z'),
      await build('p2.idx', cidrs(60), '2026-10-02T00:00:00Z'),
      await build('p3.idx', cidrs(70), '2026-10-03T00:00:00Z'),
    ];
    files.forEach((f, i) => recordVersion(dir, f, t + i * DAY));
    const before = historySizeBytes(dir);
    const retention = 10 * DAY;
    // Version 1 was served until t+1d, more than the retention before now: it goes; version 2 was still served at the cutoff.
    const now = t + DAY + retention + 1;
    expect(pruneHistory(dir, now, retention)).toBe(1);
    const catalog = readCatalog(dir);
    expect(catalog.versions.map((v) => v.servedFromMs)).toEqual([t + DAY, t + 2 * DAY]);
    expect(historySizeBytes(dir)).toBeLessThan(before);
    expect(readdirSync(dir).filter((n) => n.endsWith('.recipe'))).toHaveLength(2);
    const out = join(root, 'rebuilt-p2.idx');
    rebuildVersion(dir, catalog, catalog.versions[0], out);
    expect(Buffer.compare(readFileSync(out), readFileSync(files[1]))).toBe(0);
    // The moments answerable start at the retention's cutoff, and an earlier one is the documented error.
    const history = new PastIndexes({ dir, retentionMs: retention }, new HistoryJobs());
    try {
      expect(history.range(catalog, now)).toEqual({ fromMs: now - retention, toMs: now });
      expect(versionForAt(history, new Date(now - retention + 1).toISOString(), now).version.servedFromMs).toBe(t + DAY);
      let refused: unknown;
      try {
        versionForAt(history, new Date(t + 1000).toISOString(), now);
      } catch (e) {
        refused = e;
      }
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).code).toBe('AT_OUT_OF_RANGE');
      expect((refused as ApiError).details).toMatchObject({ available_from: new Date(now - retention).toISOString(), retention: '10d' });
    } finally {
      history.close();
    }
  }, 60_000);

  test('a folder another process is recording into is left alone; the link given is removed either way', async () => {
    const dir = join(root, 'h3');
    const a = await build('l1.idx', cidrs(10), '2026-11-01T00:00:00Z');
    const link = join(root, 'l1-link.idx');
    linkSync(a, link);
    recordHistoryJob({ op: 'record', dir, path: link, servedFromMs: 1, nowMs: 1, retentionMs: DAY }); // creates the folder
    writeFileSync(join(dir, '.recording.lock'), '');
    linkSync(a, link);
    expect(recordHistoryJob({ op: 'record', dir, path: link, servedFromMs: 2, nowMs: 2, retentionMs: DAY })).toBeNull();
    expect(existsSync(link)).toBe(false);
  }, 60_000);

  test("a version a running puller deferred is left by the server's recorder; the puller's own recording, and a deferral a dead process left, record it", async () => {
    const dir = join(root, 'h-deferred');
    const a = await build('df1.idx', cidrs(10), '2026-11-01T00:00:00Z');
    const id = new Bun.CryptoHasher('sha256').update(readFileSync(a)).digest('hex');
    const link = join(root, 'df1-link.idx');
    const job = (servedFromMs: number, unlessDeferred?: boolean) => {
      linkSync(a, link);
      return recordHistoryJob({ op: 'record', dir, path: link, servedFromMs, nowMs: servedFromMs, retentionMs: DAY, unlessDeferred });
    };
    deferRecording(dir, id, 1);
    expect(job(1, true)).toMatchObject({ recorded: false, deferred: true, bytesWritten: 0 });
    expect(readCatalog(dir).versions).toEqual([]);
    expect(job(1)).toMatchObject({ recorded: true });
    // A deferral by a process that is gone: the recorder records (here the next moment of another history).
    const other = join(root, 'h-deferred-dead');
    deferRecording(other, id, 1);
    writeFileSync(join(other, 'deferred-recording.json'), JSON.stringify({ sha256: id, servedFromMs: 1, pid: 999_999_999 }));
    linkSync(a, link);
    expect(recordHistoryJob({ op: 'record', dir: other, path: link, servedFromMs: 2, nowMs: 2, retentionMs: DAY, unlessDeferred: true })).toMatchObject({ recorded: true });
  }, 60_000);

  test('the recorder records the index it starts with, and sweeps links a dead process left in incoming/', async () => {
    const dir = join(root, 'h5');
    const index = await build('r1.idx', cidrs(10), '2026-11-01T00:00:00Z');
    mkdirSync(join(dir, 'incoming'), { recursive: true });
    const dead = join(dir, 'incoming', '1-1-999999999.idx'); // above any pid Linux hands out
    writeFileSync(dead, 'left behind');
    const holder = IndexHolder.open(index);
    const jobs = new HistoryJobs();
    const failures: string[] = [];
    try {
      const recorded = recordServedIndexes(holder, { dir, retentionMs: DAY }, jobs, () => 5_000, { failed: (m) => failures.push(m) });
      expect(existsSync(dead)).toBe(false);
      await recorded();
      expect(failures).toEqual([]);
      expect(readCatalog(dir).versions.map((v) => v.servedFromMs)).toEqual([5_000]);
      expect(readdirSync(join(dir, 'incoming'))).toEqual([]);
    } finally {
      jobs.close();
    }
  }, 60_000);

  test('at most MAX_PENDING_REBUILDS cold versions are waited for at once; another is refused, the same one joins', async () => {
    const never = { run: () => new Promise<never>(() => {}), close() {} } as unknown as HistoryJobs;
    const history = new PastIndexes({ dir: join(root, 'h6'), retentionMs: DAY }, never);
    const version = (n: number) => ({ id: String(n).repeat(64).slice(0, 64), builtAt: '', builtAtMs: n, servedFromMs: n, sizeBytes: 1, xxh3: '0' });
    const first = history.readerOf(version(1));
    history.readerOf(version(2));
    expect(history.readerOf(version(1))).toBe(first);
    await expect(history.readerOf(version(3))).rejects.toThrow(`${MAX_PENDING_REBUILDS} past indexes are being rebuilt already`);
  });

  test('a malformed catalog is refused with its path', () => {
    const dir = join(root, 'h4');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    writeFileSync(join(dir, 'catalog.json'), JSON.stringify({ format: 1, versions: [{ id: 'x' }], packs: {} }));
    expect(() => readCatalog(dir)).toThrow(`history catalog ${join(dir, 'catalog.json')} is malformed`);
  });

  test('at: dates, RFC 3339 times with offsets, and refusals', () => {
    expect(parseAt('2026-11-03')).toBe(Date.parse('2026-11-03T00:00:00Z'));
    expect(parseAt('2026-11-03T14:00:00+02:00')).toBe(Date.parse('2026-11-03T12:00:00Z'));
    expect(parseAt('2026-11-03T14:00:00 02:00')).toBe(Date.parse('2026-11-03T12:00:00Z')); // an unencoded +
    expect(parseAt('2026-11-03t14:00:00.5z')).toBe(Date.parse('2026-11-03T14:00:00.500Z'));
    for (const bad of ['2026-11-31', '2026-13-01', '2026-11-03T24:00:00Z', '2026-11-03 14:00:00Z', '1730000000', 'now']) {
      expect(() => parseAt(bad)).toThrow(ApiError);
    }
  });
});

describe('history store: interval tables stored as differences', () => {
  /** Bytes of section `tag` of the index at `path` that `recipe`'s runs take from pack `own` (what the recording had to store anew). */
  const newBytesIn = (path: string, recipe: Recipe, own: string, tag: string) => {
    const s = parseIndexBytes(path, Bun.mmap(path, { shared: false })).sections.get(tag)!;
    let at = 0;
    let n = 0;
    for (const [p, , len] of recipe.runs) {
      if (recipe.packs[p] === own) n += Math.max(0, Math.min(at + len, s.offset + s.length) - Math.max(at, s.offset));
      at += len;
    }
    return n;
  };

  test('an interval inserted early stores a few chunks of V4L1, not every entry after it; both versions rebuild byte for byte', async () => {
    const dir = join(root, 't1');
    const a = await build('t-a.idx', cidrs(20_000), '2026-11-01T00:00:00Z');
    const b = await build('t-b.idx', cidrs(20_000, 300), '2026-11-02T00:00:00Z');
    recordVersion(dir, a, 1_000);
    const second = recordVersion(dir, b, 2_000);
    expect(second.keyframe).toBe(false);
    const recipe = readPacked<Recipe>(join(dir, recipeName(second.version.id)));
    expect(recipe.transforms?.map((t) => t[2])).toEqual([TransformKind.Delta32, TransformKind.Delta32, TransformKind.Delta32, TransformKind.V6Nodes]);
    const own = recipe.packs.find((p) => p.startsWith(second.version.id.slice(0, 32)))!;
    // Every V4L1 entry after 10.1.44.0/24 moved by two intervals: 4 MiB stored as they are, a few chunks as differences.
    expect(newBytesIn(b, recipe, own, 'V4L1')).toBeLessThan(64 * 1024);
    const catalog = readCatalog(dir);
    for (const [i, original] of [a, b].entries()) {
      const out = join(root, `t-rebuilt-${i}.idx`);
      rebuildVersion(dir, catalog, catalog.versions[i], out);
      expect(Buffer.compare(readFileSync(out), readFileSync(original))).toBe(0);
    }
  }, 60_000);

  test('the untransforming stream gives the file back whatever the pieces it is handed; malformed ranges are refused', async () => {
    const path = await build('t-c.idx', cidrs(3_000, 5), '2026-11-01T00:00:00Z');
    const original = readFileSync(path);
    const file = Bun.mmap(path, { shared: false });
    const { transforms, segments } = storedSegments(parseIndexBytes(path, file), file);
    expect(transforms.length).toBe(4);
    expect(segments.map((s) => s.start)).toEqual([...segments.keys()].map((i) => (i === 0 ? 0 : segments[i - 1].start + segments[i - 1].bytes.length)));
    const data = Buffer.concat(segments.map((s) => s.bytes));
    expect(data.length).toBe(original.length);
    expect(Buffer.compare(data, original)).not.toBe(0);
    expect(Buffer.compare(file, original)).toBe(0); // neither the file nor its mapping is written
    const parts: Uint8Array[] = [];
    const out = untransformingEmitter(transforms, (b) => void parts.push(b.slice()));
    let seed = 7;
    for (let at = 0; at < data.length; ) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      const n = Math.min(data.length - at, 1 + (seed % 9_999));
      out.emit(data.subarray(at, at + n));
      at += n;
    }
    out.finish();
    expect(Buffer.compare(Buffer.concat(parts), original)).toBe(0);
    const cut = untransformingEmitter(transforms, () => {});
    cut.emit(data.subarray(0, transforms[0][0] + 6));
    expect(() => cut.finish()).toThrow(/inside or before a transformed range/);
    expect(transformsWellFormed(transforms)).toBe(true);
    for (const bad of [[[8, 4, 3]], [[6, 4, 1]], [[8, 6, 1]], [[64, 8, 1], [32, 8, 1]], [[0, 8, 1], [4, 8, 1]], 'x', Array(17).fill([0, 4, 1])]) expect(transformsWellFormed(bad)).toBe(false);
  }, 60_000);

  test('a history written before transforms (recipes without them) still rebuilds, and the next recording goes on from it', async () => {
    const dir = join(root, 't-old');
    mkdirSync(dir, { recursive: true });
    const a = await build('t-old-a.idx', cidrs(2_000), '2026-11-01T00:00:00Z');
    const b = await build('t-old-b.idx', cidrs(2_000, 50), '2026-11-02T00:00:00Z');
    // Version a as the earlier code stored it: its bytes as they are, in 4 MiB zstd frames, one run.
    const bytes = readFileSync(a);
    const id = new Bun.CryptoHasher('sha256').update(bytes).digest('hex');
    const name = `${id.slice(0, 32)}-1000`;
    const frames: [number, number][] = [];
    const stored: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; at += FRAME_BYTES) {
      const z = Bun.zstdCompressSync(bytes.subarray(at, at + FRAME_BYTES));
      frames.push([Math.min(FRAME_BYTES, bytes.length - at), z.length]);
      stored.push(z);
    }
    writeFileSync(join(dir, `${name}.pack`), Buffer.concat(stored));
    writePacked(join(dir, recipeName(id)), { packs: [name], runs: [[0, 0, bytes.length]] });
    const builtAtMs = Date.parse('2026-11-01T00:00:00Z');
    writeCatalog(dir, { format: 1, versions: [{ id, builtAt: new Date(builtAtMs).toISOString(), builtAtMs, servedFromMs: 1_000, sizeBytes: bytes.length, xxh3: xxh3Of(bytes) }], packs: { [name]: { frames } } });
    expect(recordVersion(dir, b, 2_000)).toMatchObject({ recorded: true, keyframe: true }); // no chunk list: whole
    const catalog = readCatalog(dir);
    for (const [i, original] of [a, b].entries()) {
      const out = join(root, `t-old-rebuilt-${i}.idx`);
      rebuildVersion(dir, catalog, catalog.versions[i], out);
      expect(Buffer.compare(readFileSync(out), readFileSync(original))).toBe(0);
    }
  }, 60_000);
});
