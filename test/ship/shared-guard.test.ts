/**
 * No test reads the real feed snapshots (../shared, absent from a clone)
 * outside the skip guard of test/helpers/shared-feeds.ts: a static check of
 * every test file, so a bare clone keeps passing `bun test` (a read outside
 * the guard fails there, and nobody with the snapshots notices). Only
 * shared-feeds.ts spells the path; every use of a name that reads the
 * snapshots sits inside describeWithShared / testWithShared, or behind a
 * hasSharedFeeds check.
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const TEST_ROOT = resolve(import.meta.dir, '..');

/** Names whose use reads the real snapshots (the folder itself, or a build, mirror or text made from it). */
const READS_SHARED = ['SHARED_FEEDS_DIR', 'FEEDS_DIR', 'fullIndexPath', 'fullIndexWithDefaultsPath', 'snapshotText'];
/** Calls whose arguments run only where the snapshots are (or fail under CI=true): the guard's own, and `.skipIf(!hasSharedFeeds…)(…)`. */
const GUARDS = /\b(?:describeWithShared|testWithShared)\s*\(|\.skipIf\s*\([^()]*(?:\([^()]*\)[^()]*)*\b(?:hasSharedFeeds|HAVE_FEEDS|haveFeeds)\b[^()]*(?:\([^()]*\)[^()]*)*\)\s*\(/g;
/** A statement that checks for the snapshots first: `if (hasSharedFeeds…`, `hasSharedFeeds ? … : …`. */
const CHECKS = /\b(?:hasSharedFeeds|HAVE_FEEDS|haveFeeds)\b/g;

/** The text with comments and string contents blanked (same length), so matching sees code only. */
export function codeOnly(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      out += ' '.repeat(stop - i);
      i = stop;
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (c === '/' && /[(,=:[!&|?{};]\s*$|^\s*$|\breturn\s*$/.test(out.slice(-40))) {
      // A regular expression literal (its quotes are no strings): blanked to its closing slash.
      let j = i + 1;
      let inClass = false;
      while (j < text.length && text[j] !== '\n' && (inClass || text[j] !== '/')) {
        if (text[j] === '\\') j++;
        else if (text[j] === '[') inClass = true;
        else if (text[j] === ']') inClass = false;
        j++;
      }
      out += '/' + text.slice(i + 1, j).replace(/[^\n]/g, ' ') + (text[j] === '/' ? '/' : '');
      i = text[j] === '/' ? j + 1 : j;
    } else if (c === "'" || c === '"' || c === '`') {
      out += c;
      let j = i + 1;
      while (j < text.length && text[j] !== c) {
        if (c === '`' && text[j] === '$' && text[j + 1] === '{') {
          // A template's substitution is code: kept.
          let depth = 0;
          const from = j;
          for (; j < text.length; j++) {
            if (text[j] === '{') depth++;
            else if (text[j] === '}' && --depth === 0) break;
          }
          out += codeOnly(text.slice(from, j + 1));
          j++;
        } else {
          const step = text[j] === '\\' ? 2 : 1;
          out += text.slice(j, j + step).replace(/[^\n]/g, ' ');
          j += step;
        }
      }
      out += j < text.length ? c : '';
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Where the call whose `(` is at `open` ends (its matching `)`). */
function closeOf(code: string, open: number): number {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    if (code[i] === '(') depth++;
    else if (code[i] === ')' && --depth === 0) return i;
  }
  return code.length;
}

/** The end of the statement (or block) that starts at `from`: the next `;` or newline at depth 0 after any brackets opened. */
function statementEnd(code: string, from: number): number {
  let depth = 0;
  for (let i = from; i < code.length; i++) {
    const c = code[i];
    if (c === '(' || c === '{' || c === '[') depth++;
    else if (c === ')' || c === '}' || c === ']') {
      if (--depth < 0) return i;
    } else if (depth === 0 && (c === ';' || c === '\n')) {
      // A `? … :` or an `if (…)` followed by a block carries on across the line.
      const rest = code.slice(i + 1).trimStart();
      if (c === '\n' && /^[?:{]|^else\b/.test(rest)) continue;
      return i;
    }
  }
  return code.length;
}

/** Spans of the code that run only where the snapshots are. */
function guardedSpans(code: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  for (const m of code.matchAll(GUARDS)) {
    const open = m.index + m[0].length - 1;
    spans.push([open, closeOf(code, open)]);
  }
  for (const m of code.matchAll(CHECKS)) spans.push([m.index, statementEnd(code, m.index)]);
  // `if (…hasSharedFeeds…) …`: the statement the condition governs.
  for (const m of code.matchAll(/\bif\s*\(/g)) {
    const open = m.index + m[0].length - 1;
    const close = closeOf(code, open);
    if (CHECKS.test(code.slice(open, close))) spans.push([close, statementEnd(code, close + 1)]);
    CHECKS.lastIndex = 0;
  }
  return spans;
}

/** Top-level function declarations: name and body span. */
function functionsOf(code: string): Array<{ name: string; from: number; to: number }> {
  const out: Array<{ name: string; from: number; to: number }> = [];
  // Arrow functions bound at top level: their body is the rest of the statement.
  for (const m of code.matchAll(/^(?:export\s+)?const\s+(\w+)\s*=\s*(?:async\s*)?(?:\([^()]*\)|\w+)\s*(?::[^=]*)?=>/gm)) out.push({ name: m[1], from: m.index, to: statementEnd(code, m.index + m[0].length) });
  for (const m of code.matchAll(/^(?:export\s+)?(?:async\s+)?function\s*\*?\s*(\w+)\s*[(<]/gm)) {
    const body = code.indexOf('{', closeOf(code, code.indexOf('(', m.index)));
    let depth = 0;
    let i = body;
    for (; i < code.length; i++) {
      if (code[i] === '{') depth++;
      else if (code[i] === '}' && --depth === 0) break;
    }
    out.push({ name: m[1], from: m.index, to: i });
  }
  return out;
}

/**
 * Line numbers where `text` reads the snapshots outside any guard. A read
 * inside a top-level function is guarded when every call of that function
 * is; a top-level `const X = …` of a read makes X a name that reads them.
 */
export function unguardedReads(text: string): number[] {
  const code = codeOnly(text);
  const spans = guardedSpans(code);
  const functions = functionsOf(code);
  const names = new Set(READS_SHARED);
  const inSpan = (at: number) => spans.some(([a, b]) => at > a && at < b);
  const uses = (name: string) => [...code.matchAll(new RegExp(`\\b${name}\\b`, 'g'))].map((m) => m.index).filter((at) => {
    const lineStart = code.lastIndexOf('\n', at) + 1;
    return !/^\s*(?:import|export\s*\{)/.test(code.slice(lineStart, at));
  });
  /** Whether the code at `at` runs only where the snapshots are (`seen`: functions already followed). */
  const guarded = (at: number, seen: Set<string>): boolean => {
    if (inSpan(at)) return true;
    const fn = functions.find((f) => at > f.from && at < f.to);
    if (fn === undefined || seen.has(fn.name)) return false;
    const calls = uses(fn.name).filter((c) => !(c >= fn.from && c < fn.to) && c !== code.indexOf(fn.name, fn.from));
    return calls.length > 0 && calls.every((c) => guarded(c, new Set([...seen, fn.name])));
  };
  const lines = new Set<number>();
  const pending = [...names];
  while (pending.length > 0) {
    const name = pending.pop()!;
    for (const at of uses(name)) {
      if (name === 'startFeedMirror' || guarded(at, new Set())) continue;
      const lineStart = code.lastIndexOf('\n', at) + 1;
      const before = code.slice(lineStart, at);
      // The declaration of an alias is not a use of it.
      if (/^(?:export\s+)?(?:const|let)\s+$/.test(before)) continue;
      // A path made of the folder (join, resolve, a template, the name itself) names a new alias; any other expression reads.
      const alias = /^(?:export\s+)?(?:const|let)\s+(\w+)\s*=\s*(?:join\(|resolve\(|`\$\{)?$/.exec(before);
      if (alias && !/^(?:hasSharedFeeds|HAVE_FEEDS|haveFeeds)$/.test(alias[1])) {
        if (!names.has(alias[1])) {
          names.add(alias[1]);
          pending.push(alias[1]);
        }
        continue;
      }
      lines.add(code.slice(0, at).split('\n').length);
    }
  }
  // A mirror started without roots serves the real snapshots.
  for (const m of code.matchAll(/\bstartFeedMirror\(\s*\)/g)) if (!guarded(m.index, new Set())) lines.add(code.slice(0, m.index).split('\n').length);
  return [...lines].sort((a, b) => a - b);
}

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...testFiles(p));
    else if (e.name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

describe('tests read ../shared only inside the skip guard', () => {
  test('the check itself: an unguarded read is found, guarded ones are not', () => {
    expect(unguardedReads(`const t = readFileSync(join(FEEDS_DIR, 'vpn/a.txt'));\n`)).toEqual([1]);
    expect(unguardedReads(`beforeAll(() => {\n  mirror = startFeedMirror();\n});\n`)).toEqual([2]);
    expect(unguardedReads(`describeWithShared('x', () => {\n  test('y', () => readFileSync(join(SHARED_FEEDS_DIR, 'a')));\n});\n`)).toEqual([]);
    expect(unguardedReads(`testWithShared('y', async () => {\n  await fullIndexPath();\n});\n`)).toEqual([]);
    expect(unguardedReads(`const index = hasSharedFeeds\n  ? await fullIndexPath()\n  : await fixtureIndexPath();\n`)).toEqual([]);
    expect(unguardedReads(`// reads ../shared/feeds via FEEDS_DIR\nimport { FEEDS_DIR } from './x.ts';\nstartFeedMirror(FIXTURE_FEEDS_DIR);\n`)).toEqual([]);
    expect(unguardedReads(`expect(x).toMatch(/the entry's/);\nconst t = readFileSync(join(FEEDS_DIR, 'a'));\n`)).toEqual([2]);
    expect(unguardedReads(`const M = join(FEEDS_DIR, 'feeds.json');\nconst t = readFileSync(M);\n`)).toEqual([2]);
    expect(unguardedReads(`const t = readFileSync(\`\${SHARED_FEEDS_DIR}/feeds.json\`);\n`)).toEqual([1]);
    expect(unguardedReads(`describe.skipIf(!hasSharedFeeds)('x', () => {\n  test('y', () => load());\n});\nfunction load() {\n  return readFileSync(join(FEEDS_DIR, 'a'));\n}\n`)).toEqual([]);
    expect(unguardedReads(`test('y', () => load());\nfunction load() {\n  return readFileSync(join(FEEDS_DIR, 'a'));\n}\n`)).toEqual([3]);
  });

  test('no test file spells the path to ../shared (only test/helpers/shared-feeds.ts does)', () => {
    // A string that starts a relative path up to a folder named shared (prose naming ../shared/feeds in a test's name is no read).
    const offenders = [...testFiles(TEST_ROOT)].filter((f) => /['"`](?:\.\.\/)+shared\b|['"`]\.\.['"`]\s*,\s*['"`]shared\b/.test(codeOnlyKeepingStrings(readFileSync(f, 'utf8'))));
    expect(offenders.map((f) => relative(TEST_ROOT, f))).toEqual([]);
  });

  test('every read of the snapshots in a test file is guarded', () => {
    const offenders: string[] = [];
    for (const f of testFiles(TEST_ROOT)) {
      if (f === import.meta.path) continue;
      for (const line of unguardedReads(readFileSync(f, 'utf8'))) offenders.push(`${relative(TEST_ROOT, f)}:${line}`);
    }
    expect(offenders).toEqual([]);
  });
});

/** The text with comments blanked but strings kept (where a path would be spelled). */
function codeOnlyKeepingStrings(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}
