/**
 * Parsed `fields`/`include` projections kept by their query text and tier:
 * clients ask with the same few field sets again and again, and parsing one
 * (split, trim, check, a Set) costs more than finding it. Only accepted
 * projections are kept (a refused one is parsed, and refused, every time);
 * the kept ones are shared and never changed.
 */
import { parseProjection, type Projection } from '../lookup/projection.ts';
import { queryValues } from './request-params.ts';
import type { Tier } from '../tiers.ts';

/** Distinct (query, tier) projections kept; past it the memo starts over, so a client cycling through field sets cannot grow it. */
const MAX_PROJECTIONS = 256;

/** `?` */
const QUESTION_MARK = 63;

/** A bounded memo of parseProjection. */
export class ProjectionMemo {
  private readonly kept = new Map<string, Projection>();
  /** The query text (from its `?`) and tier last kept by `ofUrl`, and their projection: a client repeats its query. */
  private lastQuery = '';
  private lastTier: Tier | null = null;
  private lastProjection: Projection | null = null;

  /**
   * The projection `ofUrl` last kept, when `url`'s query (from its first
   * `?`) is the same text and the tier the same; else null. Compared in
   * place, so a repeated query costs no slice and no parse.
   */
  lastOf(url: string, tier: Tier): Projection | null {
    const projection = this.lastProjection;
    if (projection === null || tier !== this.lastTier) return null;
    const query = this.lastQuery;
    const at = url.length - query.length;
    return at >= 0 && url.charCodeAt(at) === QUESTION_MARK && url.indexOf('?') === at && url.startsWith(query, at) ? projection : null;
  }

  /**
   * The projection of a request URL's `names` parameters (`fields`,
   * `include`) for a tier (throws parseProjection's errors); kept as the
   * last one for `lastOf` unless `keepAsLast` is false.
   */
  ofUrl(url: string, names: readonly [string, string], tier: Tier, keepAsLast = true): Projection {
    const last = this.lastOf(url, tier);
    if (last !== null) return last;
    const [fields, include] = queryValues(url, names);
    const projection = this.of(fields, include, tier);
    if (keepAsLast) {
      const at = url.indexOf('?');
      this.lastQuery = at < 0 ? '' : url.slice(at);
      this.lastTier = tier;
      this.lastProjection = projection;
    }
    return projection;
  }

  /** parseProjection of these query values for a tier (throws its errors). */
  of(fields: string[] | undefined, include: string[] | undefined, tier: Tier): Projection {
    // A projection depends on each parameter's values joined by commas (projection.ts), and on
    // whether it is present; the length of the fields text makes the key unambiguous.
    const f = fields === undefined ? undefined : fields.length === 1 ? fields[0] : fields.join(',');
    const key = `${tier}:${f === undefined ? -1 : f.length}:${f ?? ''}${include === undefined ? '' : ':' + include.join(',')}`;
    let projection = this.kept.get(key);
    if (projection === undefined) {
      projection = parseProjection({ fields, include }, tier);
      if (this.kept.size >= MAX_PROJECTIONS) this.kept.clear();
      this.kept.set(key, projection);
    }
    return projection;
  }
}
