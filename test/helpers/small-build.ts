/** Builds a small index from sources written as text (fast builds for tests that compare indexes). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import type { ResolvedSource } from '../../index-builder/manifest.ts';

/** One source: its manifest type, options and file text. */
export interface TextSource {
  type: string;
  /** File name inside the build's folder. */
  name: string;
  text: string;
  options?: Record<string, string>;
}

/** Writes the sources into `dir` and builds `dir/<out>`; returns the index path. */
export async function buildFromTexts(dir: string, out: string, sources: readonly TextSource[], builtAt = '2026-11-18T12:00:00Z'): Promise<string> {
  const resolved: ResolvedSource[] = sources.map((s) => {
    const absPath = join(dir, s.name);
    writeFileSync(absPath, s.text);
    return { options: { ...s.options, type: s.type, path: absPath }, absPath, displayPath: s.name };
  });
  const path = join(dir, out);
  await buildIndex({ sources: resolved, out: path, quiet: true, builtAtMs: Date.parse(builtAt) });
  return path;
}

/** A tiny index of one datacenter list (`name` its provider) holding `cidrs`, built at `builtAt`, as `dir/<name>.idx`. */
export function datacenterIndex(dir: string, name: string, cidrs: readonly string[], builtAt: string): Promise<string> {
  return buildFromTexts(dir, `${name}.idx`, [{ type: 'cidr-list', name: `${name}.txt`, text: `${cidrs.join('\n')}\n`, options: { category: 'datacenter', provider: name } }], builtAt);
}

/** The ISO time `days` days before now, in whole seconds: a build time a pull's age window accepts (tests never pin dates the clock will outrun). */
export function daysAgo(days: number): string {
  return new Date(Math.floor((Date.now() - days * 86_400_000) / 1000) * 1000).toISOString();
}
