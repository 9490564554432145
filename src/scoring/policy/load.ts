/**
 * Loading a decision policy: the built-in default, or a JSON file validated
 * against the schema (used at start and on /reload).
 */
import { Value } from '@sinclair/typebox/value';
import { PolicySchema, type Policy } from './schema.ts';
import { POLICY_2026_11_3 } from './policy-2026-11.3.ts';

/** The built-in policy. */
export const DEFAULT_POLICY: Policy = POLICY_2026_11_3;

/** A policy file that cannot be used, with every problem found. */
export class PolicyError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`invalid decision policy ${source}: ${problems.join('; ')}`);
    this.name = 'PolicyError';
  }
}

/** Relations between fields that a JSON schema cannot express. */
function semanticProblems(p: Policy): string[] {
  const problems: string[] = [];
  if (p.risk_levels.medium >= p.risk_levels.high) problems.push('/risk_levels: medium must be below high');
  if (p.likelihood_levels.medium >= p.likelihood_levels.high) problems.push('/likelihood_levels: medium must be below high');
  if (p.likelihood_bounds.min >= p.likelihood_bounds.max) problems.push('/likelihood_bounds: min must be below max');
  if (p.confidence.margin_medium >= p.confidence.margin_high) problems.push('/confidence: margin_medium must be below margin_high');
  if (p.confidence.quality_medium > p.confidence.quality_high) problems.push('/confidence: quality_medium must not exceed quality_high');
  // verified_crawler_protection needs a non-challenging action to keep on these surfaces.
  for (const s of ['content', 'seo_crawler'] as const) {
    if (!p.surfaces[s].actions.allow) problems.push(`/surfaces/${s}/actions: must offer allow`);
  }
  return problems;
}

/** Validates an already parsed policy; throws PolicyError listing every problem. */
export function validatePolicy(value: unknown, source = '<value>'): Policy {
  if (!Value.Check(PolicySchema, value)) {
    const problems = [...Value.Errors(PolicySchema, value)].slice(0, 20).map((e) => `${e.path || '/'}: ${e.message}`);
    throw new PolicyError(source, problems);
  }
  const problems = semanticProblems(value);
  if (problems.length > 0) throw new PolicyError(source, problems);
  return value;
}

/** The policy in a JSON file, or the built-in one when no path is given. */
export async function loadPolicy(path?: string): Promise<Policy> {
  if (!path) return DEFAULT_POLICY;
  let parsed: unknown;
  try {
    parsed = JSON.parse(await Bun.file(path).text());
  } catch (err) {
    throw new PolicyError(path, [err instanceof Error ? err.message : String(err)]);
  }
  return validatePolicy(parsed, path);
}
