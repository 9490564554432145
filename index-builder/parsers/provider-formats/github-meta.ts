/**
 * GitHub `api.github.com/meta`: top-level arrays of CIDRs per service, v4 and
 * v6 mixed. Sections map to categories:
 * - `hooks` → `webhook` (webhook delivery senders);
 * - `actions`, `actions_macos`, `codespaces`, `dependabot`, `importer`,
 *   `github_enterprise_importer` → `datacenter` (machines running customer jobs);
 * - `web`, `api`, `git`, `packages`, `pages`, `copilot` → `content` (GitHub's endpoints);
 * - any other array made only of CIDRs → the manifest category.
 * A prefix in several sections keeps the first in that order (webhook first,
 * as the most specific claim). Non-CIDR members (`ssh_keys`, `domains`) are ignored.
 */
import type { Category } from '../../sink.ts';
import { parseCidr } from '../../../src/net/ip.ts';
import { isObject } from './json-shape.ts';
import { entriesOf, ShapeError, type ProviderEntry, type ProviderFormat } from './types.ts';

/** Known sections in precedence order, with their category. */
const SECTIONS: ReadonlyArray<[section: string, category: Category]> = [
  ['hooks', 'webhook'],
  ['actions', 'datacenter'],
  ['actions_macos', 'datacenter'],
  ['codespaces', 'datacenter'],
  ['dependabot', 'datacenter'],
  ['importer', 'datacenter'],
  ['github_enterprise_importer', 'datacenter'],
  ['web', 'content'],
  ['api', 'content'],
  ['git', 'content'],
  ['packages', 'content'],
  ['pages', 'content'],
  ['copilot', 'content'],
];

/** Reads GitHub's meta document. */
export const readGithubMeta: ProviderFormat = (doc) => {
  if (!isObject(doc) || !Array.isArray(doc.hooks)) throw new ShapeError('expected the GitHub meta object with a "hooks" array');
  const out: ProviderEntry[] = [];
  const known = new Set<string>();
  for (const [section, category] of SECTIONS) {
    known.add(section);
    const list = doc[section];
    if (Array.isArray(list)) out.push(...entriesOf(list, section, { category, service: section }));
  }
  for (const [section, list] of Object.entries(doc)) {
    if (known.has(section) || !Array.isArray(list) || list.length === 0) continue;
    const allCidrs = list.every((v) => typeof v === 'string' && parseCidr(v.trim()) !== null);
    if (allCidrs) out.push(...entriesOf(list, section, { service: section }));
  }
  return out;
};
