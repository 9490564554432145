/** docs/signals.md and docs/scoring.md must agree with the registry and the built-in policy. */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { readFileSync } from 'node:fs';
import { GUARDRAIL_NAMES } from '../../src/scoring/policy/schema.ts';
import { CATEGORY_CAPS, DEFAULT_POLICY, SIGNALS, SIGNAL_LABELS, type Action } from '../../src/scoring/index.ts';

const doc = (name: string) => readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8');

/** Rows of the markdown tables whose first cell is a `code` value: first cell → cells. */
function codeRows(md: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of md.split('\n')) {
    const m = /^\| `([^`]+)` \|(.*)\|$/.exec(line);
    if (m) rows.set(m[1], m[2].split('|').map((c) => c.trim()));
  }
  return rows;
}

const signedWeight = (w: number) => (w > 0 ? `+${w}` : String(w));

describe('docs/signals.md', () => {
  const rows = codeRows(doc('signals.md'));

  test('lists every registered signal with its stable fields and weight', () => {
    for (const label of SIGNAL_LABELS) {
      const d = SIGNALS[label];
      expect({ label, cells: rows.get(label)?.slice(0, 5) }).toEqual({
        label,
        cells: [d.category, d.severity, d.confidence, signedWeight(d.weight), d.description],
      });
    }
  });

  test('lists no label that is not in the registry', () => {
    expect([...rows.keys()].filter((l) => !SIGNAL_LABELS.includes(l as never))).toEqual([]);
  });
});

describe('docs/scoring.md', () => {
  const md = doc('scoring.md');
  const rows = codeRows(md);

  test('the surface table is the built-in policy', () => {
    const actions: Action[] = ['allow', 'monitor', 'challenge', 'manual_review', 'block'];
    for (const [surface, sp] of Object.entries(DEFAULT_POLICY.surfaces)) {
      const m = sp.abuse_model;
      const want = [m.bias, m.risk, m.abuse, m.anonymity, m.infrastructure, m.routing, m.trust].map(String);
      for (const a of actions) want.push(sp.actions[a] ? `${sp.actions[a]!.if_bad} / ${sp.actions[a]!.if_good}` : '—');
      expect({ surface, cells: rows.get(surface) }).toEqual({ surface, cells: want });
    }
  });

  test('names every profile with its role and trust, every guardrail and the category caps', () => {
    for (const [profile, p] of Object.entries(DEFAULT_POLICY.profiles)) {
      expect(md).toMatch(new RegExp(`\\| \`${profile}\` \\| [^|]+ \\| ${p.role} \\| ${p.trust} \\|`));
    }
    for (const g of GUARDRAIL_NAMES) expect(rows.has(g)).toBe(true);
    for (const [category, cap] of Object.entries(CATEGORY_CAPS)) {
      expect(md).toContain(`| ${category} | ${cap.min === 0 ? 0 : `−${-cap.min}`} … ${cap.max} |`);
    }
  });
});
