/**
 * Feed content as hostile input, against a real publisher on 127.0.0.1
 * (`feeds update` in-process): poisoned third-party lists (/0, ::/0, a /4,
 * too much of the announced space, a coverage jump, a shrink) are refused
 * with their reason and the previous copy kept, `--accept` takes a large
 * change; a parser that throws refuses only that copy; an unchanged feed
 * parses nothing.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PARSERS } from '../../index-builder/parsers/index.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';
import { describeWithShared, SHARED_FEEDS_DIR } from '../helpers/shared-feeds.ts';
import { countParses, GOOGLEBOT, HostileRig, rowOf, SECRET, stateOf, VPN, VPN6, type Run } from './hostile-kit.ts';

const rig = new HostileRig();
beforeAll(() => rig.start());
afterAll(() => rig.stop());

// The IPv6 VPN list is a real snapshot only (test/fixtures/feeds has the IPv4 one).
describeWithShared('a poisoned third-party list is refused and the previous copy stays', () => {
  const dir = () => join(rig.tmp, 'poison');
  let catalog: string;
  let vpnText: string;
  let vpn6Text: string;

  beforeAll(async () => {
    // minRows lowered so the 2 % shrink is refused for the shrink (the real floor would refuse it first).
    catalog = rig.writeCatalog('poison.json', [VPN, VPN6], { [VPN]: { minRows: 100 } });
    vpnText = readFileSync(join(FIXTURE_FEEDS_DIR, VPN), 'utf8');
    vpn6Text = readFileSync(join(SHARED_FEEDS_DIR, VPN6), 'utf8');
    const first = await rig.update(dir(), catalog);
    expect(first.code).toBe(0);
  });

  /** One update with `text` served for `path`. */
  const serving = (path: string, text: string, ...more: string[]): Promise<Run> => rig.serving(dir(), catalog, path, () => new Response(text), ...more);

  const cases: Array<[string, string, string, RegExp]> = [
    ['0.0.0.0/0', VPN, '0.0.0.0/0\n', /refused: lists the whole IPv4 space \(\/0\)/],
    ['::/0', VPN6, '::/0\n', /refused: lists the whole IPv6 space \(\/0\)/],
    ['a /4', VPN, '16.0.0.0/4\n', /refused: a range as wide as a \/4 in a vpn list that is not the holder's own \(widest allowed: \/8 of IPv4\)/],
    ['2 % of the announced IPv4 space in /9s', VPN, Array.from({ length: 8 }, (_, i) => `${20 + i}.0.0.0/9`).join('\n') + '\n', /refused: covers 2\.\d% of the announced IPv4 space .* a vpn list may cover at most 2%/],
  ];
  for (const [name, path, extra, reason] of cases) {
    test(`a line ${name} in a VPN list`, async () => {
      const base = path === VPN ? vpnText : vpn6Text;
      const before = readFileSync(join(dir(), path));
      const run = await serving(path, base + extra);
      expect(run.code).toBe(1);
      expect(rowOf(run, path)).toMatch(/kept-previous/);
      expect(rowOf(run, path)).toMatch(reason);
      expect(readFileSync(join(dir(), path))).toEqual(before);
      const st = stateOf(run, path);
      expect(st.refused).toBe(true);
      expect(st.reason).toMatch(reason);
      // The state keeps the accepted copy's numbers, not the refused one's.
      expect(st.copy.sha256).toBe(new Bun.CryptoHasher('sha256').update(before).digest('hex'));
    });
  }

  test('a coverage jump beyond 4x is refused; --accept takes it', async () => {
    // Four /10s: 16.8 M addresses on top of 3.1 M, within the 2 % share but more than 4x the previous copy.
    const grown = vpnText + ['30.0.0.0/10', '30.64.0.0/10', '30.128.0.0/10', '30.192.0.0/10'].join('\n') + '\n';
    const refused = await serving(VPN, grown);
    expect(rowOf(refused, VPN)).toMatch(/refused: IPv4 coverage moved from 3144482 to 19921698 addresses \(more than 4x; --accept takes it\)/);
    const accepted = await serving(VPN, grown, '--accept', VPN);
    expect(rowOf(accepted, VPN)).toMatch(/^vpn\/x4bnet-vpn-ipv4\.txt +updated/);
    expect(readFileSync(join(dir(), VPN), 'utf8')).toBe(grown);
    expect(stateOf(accepted, VPN).refused).toBe(false);
    expect(stateOf(accepted, VPN).copy.v4.units).toBe(19921698);
    // Back to the original: a shrink of coverage by more than 4x, taken the same way.
    expect(rowOf(await serving(VPN, vpnText), VPN)).toMatch(/refused: IPv4 coverage moved/);
    expect(rowOf(await serving(VPN, vpnText, '--accept', VPN), VPN)).toMatch(/updated/);
  });

  test('a list shrinking to 2 % of its rows is refused; --accept takes it', async () => {
    const lines = vpnText.split('\n').filter((l) => l.trim() !== '');
    const shrunk = lines.slice(0, Math.floor(lines.length * 0.02)).join('\n') + '\n';
    const refused = await serving(VPN, shrunk);
    expect(rowOf(refused, VPN)).toMatch(/refused: shrank from 10862 to 217 rows \(98% lost, at most 50% allowed\)/);
    expect(readFileSync(join(dir(), VPN), 'utf8')).toBe(vpnText);
    const accepted = await serving(VPN, shrunk, '--accept', VPN);
    expect(rowOf(accepted, VPN)).toMatch(/updated +217 +10862/);
    expect(readFileSync(join(dir(), VPN), 'utf8')).toBe(shrunk);
  });

  test('a poisoned copy accepted before these checks is no baseline: the clean copy replaces it', async () => {
    const d = join(rig.tmp, 'poisoned-before');
    const c = rig.writeCatalog('poisoned-before.json', [VPN]);
    mkdirSync(join(d, 'vpn'), { recursive: true });
    writeFileSync(join(d, VPN), `${vpnText}0.0.0.0/0\n`);
    const run = await rig.update(d, c);
    expect(rowOf(run, VPN)).toMatch(/updated +10862 +10863/);
    expect(readFileSync(join(d, VPN), 'utf8')).toBe(vpnText);
  });

  test('--accept never waives the bounds every copy meets', async () => {
    const run = await serving(VPN, vpnText + '0.0.0.0/0\n', '--accept', VPN);
    expect(rowOf(run, VPN)).toMatch(/refused: lists the whole IPv4 space/);
  });

  test('--accept of a feed the catalog does not name is a usage error', async () => {
    expect((await rig.update(dir(), catalog, '--accept', 'vpn/nope.txt')).code).toBe(2);
  });
});

describe('a parser that throws on a copy', () => {
  test('refuses that copy without its message, and the other feeds of the run go on', async () => {
    const dir = join(rig.tmp, 'throwing');
    const catalog = rig.writeCatalog('throwing.json', [GOOGLEBOT, VPN]);
    const real = PARSERS['crawler-ranges'];
    PARSERS['crawler-ranges'] = async () => ({
      parse: async () => {
        throw new TypeError(`cannot read ${SECRET}`);
      },
    });
    let run: Run;
    try {
      run = await rig.update(dir, catalog);
    } finally {
      PARSERS['crawler-ranges'] = real;
    }
    expect(rowOf(run, GOOGLEBOT)).toMatch(/missing .*refused: the crawler-ranges parser failed on this copy \(TypeError\)$/);
    expect(rowOf(run, VPN)).toMatch(/updated +10862/);
    expect(run.log).not.toContain(SECRET);
    expect(run.state).not.toContain(SECRET);
  });
});

describe('an unchanged feed parses nothing', () => {
  test('the same bytes again: unchanged, no parse (a 304 likewise: the refresher tests count its downloads)', async () => {
    const dir = join(rig.tmp, 'unchanged');
    mkdirSync(dir, { recursive: true });
    const catalog = rig.writeCatalog('unchanged.json', [VPN, GOOGLEBOT]);
    expect((await rig.update(dir, catalog)).code).toBe(0);
    const lists = countParses('cidr-list');
    const crawlers = countParses('crawler-ranges');
    try {
      const run = await rig.update(dir, catalog);
      expect(rowOf(run, VPN)).toMatch(/unchanged +10862/);
      expect(rowOf(run, GOOGLEBOT)).toMatch(/unchanged +315/);
      expect(lists.count() + crawlers.count()).toBe(0);
      // A changed copy is parsed once: the previous copy's numbers come from the state, not a second parse.
      rig.mirror.overrides.set(GOOGLEBOT, () => new Response(readFileSync(join(FIXTURE_FEEDS_DIR, GOOGLEBOT), 'utf8').replace('"66.249.64.0/27"', '"66.249.64.0/28"')));
      expect(rowOf(await rig.update(dir, catalog), GOOGLEBOT)).toMatch(/updated +315 +315/);
      expect(crawlers.count()).toBe(1);
      expect(lists.count()).toBe(0);
    } finally {
      lists.restore();
      crawlers.restore();
      rig.mirror.overrides.clear();
    }
  });

  test('a remembered summary counts only for the bytes it describes: a copy changed by hand is replaced by the publisher\'s', async () => {
    const dir = join(rig.tmp, 'by-hand');
    mkdirSync(dir, { recursive: true });
    const catalog = rig.writeCatalog('by-hand.json', [GOOGLEBOT]);
    expect((await rig.update(dir, catalog)).code).toBe(0);
    writeFileSync(join(dir, GOOGLEBOT), '{"prefixes": [{"ipv4Prefix": "192.0.2.0/24"}]}');
    expect(rowOf(await rig.update(dir, catalog), GOOGLEBOT)).toMatch(/updated +315/);
    expect(readFileSync(join(dir, GOOGLEBOT))).toEqual(readFileSync(join(FIXTURE_FEEDS_DIR, GOOGLEBOT)));
  });
});
