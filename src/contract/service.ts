/**
 * Operational and account answers, declared once: health, data status
 * (spec 4.5), reload, the auth objects (docs/accounts.md) and the error
 * object (spec 2.6 / 7).
 */
import { Type, type Static } from '@sinclair/typebox';
import { EVIDENCE_KINDS } from '../index/evidence-kinds.ts';
import { Closed, Named, Nullable, NullableString, StringEnum } from './schema-kit.ts';
import { SwapSummary } from './diff.ts';

const DateTime = Type.String({ format: 'date-time' });
const NullableDateTime = Nullable(DateTime);

export const Health = Named('Health', Closed({
  status: StringEnum(['ok']),
  index: Closed({ loaded: Type.Boolean(), built_at: DateTime, generation: Type.Integer({ minimum: 0 }) }),
}));

/** Readiness of an evidence kind (index/coverage.ts), as /v1/data/status and threat_density show it. */
export const KIND_STATES = ['ready', 'stale', 'unavailable'] as const;
const KindState = StringEnum(KIND_STATES);
const kindMap = <S extends Parameters<typeof Closed>[0][string]>(value: S) => Closed(Object.fromEntries(EVIDENCE_KINDS.map((k) => [k, value])) as Record<(typeof EVIDENCE_KINDS)[number], S>);
const FeedFetchState = StringEnum(['fresh', 'stale', 'missing', 'refused', 'failed']);
const Seconds = Type.Integer({ minimum: 0 });

/** Per evidence kind: the fetch state of the catalog feeds that provide it (no paths, no publishers). */
const FeedKind = Closed({
  state: FeedFetchState,
  sources: Seconds,
  fresh: Seconds,
  stale: Seconds,
  missing: Seconds,
  refused: Seconds,
  failed: Seconds,
  last_fetch_at: NullableDateTime,
  last_change_at: NullableDateTime,
  age_seconds: Nullable(Seconds),
});

/** One catalog feed, for the admin token only. */
const FeedSource = Closed({
  path: Type.String(),
  type: Type.String(),
  state: FeedFetchState,
  cadence_seconds: Seconds,
  last_fetch_at: NullableDateTime,
  last_change_at: NullableDateTime,
  age_seconds: Nullable(Seconds),
  next_attempt_at: NullableDateTime,
  reason: NullableString,
});

/** The refresh lock's holder, for the admin token only. */
const RefreshLock = Closed({
  pid: Type.Integer({ minimum: 0 }),
  process_started_at: NullableDateTime,
  this_process: Type.Boolean({ description: 'Whether the process answering holds it' }),
  since: DateTime,
  heartbeat_at: DateTime,
  live: Type.Boolean({ description: 'false: the heartbeat lapsed, the next round takes it over' }),
});

/** How the last refresh child ended, for the admin token only. */
const RefreshRun = Closed({
  at: DateTime,
  outcome: StringEnum(['ok', 'failed', 'memory_cap', 'time_budget']),
  reason: NullableString,
  seconds: Type.Number({ minimum: 0 }),
  peak_rss_bytes: Nullable(Type.Integer({ minimum: 0 })),
});

/** The refresher's part of the data status (src/feeds/status-view.ts). */
export const FeedsStatus = Named('FeedsStatus', Closed({
  managed_by: StringEnum(['server', 'operator', 'operator-manifest']),
  refresh: StringEnum(['off', 'operator-managed', 'running', 'scheduled']),
  refresh_seconds: Type.Optional(Seconds),
  last_refresh_at: Type.Optional(NullableDateTime),
  next_attempt_at: Type.Optional(NullableDateTime),
  build: Type.Optional(StringEnum(['failed', 'pending', 'current'])),
  kinds: Type.Partial(kindMap(FeedKind)),
  sources: Type.Optional(Type.Array(FeedSource, { description: 'Per feed; only with the admin bearer token' })),
  lock: Type.Optional(Nullable(RefreshLock, { description: 'Who refreshes on this host and since when (null: nobody now); only with the admin bearer token' })),
  last_run: Type.Optional(Nullable(RefreshRun, { description: 'The last refresh child; only with the admin bearer token' })),
  swaps: Type.Optional(Type.Array(SwapSummary, { description: 'What each of the last swaps changed, oldest first (bun run diff); only with the admin bearer token' })),
}));

/** A pulling server's puller (docs/deployment.md, "Build once, serve many"); the URL and the last error only with the admin token. */
const IndexPull = Closed({
  last_check: NullableDateTime,
  last_change: NullableDateTime,
  next_check: NullableDateTime,
  consecutive_failures: Type.Integer({ minimum: 0 }),
  sha256: NullableString,
  expires_at: Nullable(DateTime, { description: 'When the served index passes IPINTEL_INDEX_MAX_AGE; null before the first verified pull' }),
  expired: Type.Boolean({ description: 'The served index is past IPINTEL_INDEX_MAX_AGE (/health answers 503)' }),
  url: Type.Optional(Type.String()),
  last_error: Type.Optional(NullableString),
  last_error_at: Type.Optional(NullableDateTime),
  last_transfer: Type.Optional(
    Nullable(
      Closed({
        method: StringEnum(['delta', 'compressed', 'plain'], { description: 'How the last new index arrived: a delta from the served version, the zstd-compressed copy, or the plain file' }),
        downloaded_bytes: Type.Integer({ minimum: 0, description: 'Bytes that pull downloaded, failed attempts included' }),
        index_bytes: Type.Integer({ minimum: 0 }),
        fallbacks: Type.Array(Type.String(), { description: 'Why each cheaper way was not used' }),
      }),
      { description: 'The last pull that swapped in a new index (null before the first); only with the admin bearer token' },
    ),
  ),
  downloaded_bytes: Type.Optional(
    Closed(
      { delta: Type.Integer({ minimum: 0 }), compressed: Type.Integer({ minimum: 0 }), plain: Type.Integer({ minimum: 0 }) },
      { description: 'Bytes downloaded since the puller started, by way; only with the admin bearer token' },
    ),
  ),
});

/** What the published version costs a puller by way (src/index/publish/publish-figures.ts). */
const IndexPublish = Closed({
  file: Type.String(),
  built_at: DateTime,
  sha256: Type.String(),
  full_bytes: Type.Integer({ minimum: 0 }),
  compressed_bytes: Nullable(Type.Integer({ minimum: 0 }), { description: 'null: no compressed copy could be made' }),
  deltas: Type.Array(Closed({ from_sha256: Type.String(), bytes: Type.Integer({ minimum: 0 }) }), { description: 'One per earlier version a delta starts from' }),
});

/** The retained history of served indexes (`?at=`; docs/deployment.md, History); absent with IPINTEL_HISTORY=off. */
const HistoryStatus = Closed({
  retention_seconds: Type.Integer({ minimum: 0 }),
  from: Nullable(DateTime, { description: 'The earliest moment `at` can name; null while nothing is retained' }),
  to: Nullable(DateTime, { description: 'The latest (now)' }),
  versions: Type.Integer({ minimum: 0, description: 'Indexes retained' }),
  size_bytes: Type.Integer({ minimum: 0, description: 'Disk the history takes (without its cache of rebuilt indexes)' }),
  readable: Type.Boolean({ description: 'false: the catalog is missing or corrupt (current answers are unaffected)' }),
  error: Type.Optional(Nullable(Type.String(), { description: 'Why the catalog cannot be read, else why the last recording failed (null: neither); only with the admin bearer token' })),
});

/** GET /v1/data/status. */
export const DataStatus = Named('DataStatus', Closed({
  status: StringEnum(['ok']),
  index: Closed({
    built_at: DateTime,
    age_seconds: Type.Integer({ minimum: 0 }),
    loaded_at: DateTime,
    source: StringEnum(['local', 'pull'], { description: '`pull`: the index comes verified from a publisher (IPINTEL_INDEX_URL)' }),
    pull: Type.Optional(IndexPull),
    publish: Type.Optional(Nullable(IndexPublish, { description: "A publisher's figures for the version it publishes now (null: nothing published yet); only with the admin bearer token" })),
  }),
  capabilities: Closed({
    ...Object.fromEntries(EVIDENCE_KINDS.map((k) => [k, KindState])),
    accounts: StringEnum(['ready', 'keys_only']),
    rdap: StringEnum(['ready']),
  }),
  coverage: kindMap(
    Closed({
      state: KindState,
      sources: Type.Integer({ minimum: 0 }),
      age_seconds: Nullable(Type.Integer({ minimum: 0 }), { description: 'Age of the newest source; null when no source is dated' }),
      stale_after_seconds: Type.Integer({ minimum: 0 }),
    }),
  ),
  feeds: Nullable(FeedsStatus, { description: 'The feed refresher (docs/feeds-update.md); null when the server runs without one' }),
  policy_version: Type.String(),
  attributions: Type.Array(Type.String()),
  history: Type.Optional(HistoryStatus),
}));

/** POST /reload. */
export const Reload = Named('Reload', Closed({
  reloaded: Type.Boolean(),
  index: Closed({
    built_at: DateTime,
    v4_intervals: Type.Integer({ minimum: 0 }),
    v6_intervals: Type.Integer({ minimum: 0 }),
    records: Type.Integer({ minimum: 0 }),
    size_bytes: Type.Integer({ minimum: 0 }),
    generation: Type.Integer({ minimum: 0 }),
  }),
  policy_version: Type.String(),
  overrides: Type.Optional(Closed({
    applied: Type.Boolean({ description: 'false: the file was refused and the overrides in force stay' }),
    entries: Type.Integer({ minimum: 0 }),
    bad_lines: Type.Integer({ minimum: 0 }),
    refused: NullableString,
    generation: Type.Integer({ minimum: 0 }),
    covers: Type.Optional(Closed({
      ipv4_addresses: Type.Integer({ minimum: 0 }),
      ipv4_share: Type.Number({ minimum: 0, maximum: 1 }),
      ipv6_share: Type.Number({ minimum: 0, maximum: 1 }),
    }, { description: 'The address space the applied file covers (the union of its prefixes), as a count and a share of each family; absent when refused' })),
  }, { description: 'The operator overrides file (IPINTEL_OVERRIDES), read again; absent when none is configured' })),
}));

/** The /reload answer. */
export type ReloadBody = Static<typeof Reload>;

const TierName = StringEnum(['anonymous', 'free', 'pro']);
export const User = Named('User', Closed({ id: Type.String(), email: NullableString, name: NullableString, tier: TierName, created_at: DateTime }));
export const Me = Named('Me', Closed({
  user: User,
  identities: Type.Array(Closed({ provider: Type.String(), email: NullableString, linked_at: DateTime })),
  session: Closed({ expires_at: DateTime }),
}));
export const Tiers = Named('Tiers', Closed({
  tiers: Type.Array(Closed({ tier: TierName, requests_per_minute: Type.Integer({ minimum: 0 }), obtained_by: Type.String(), features: Type.Array(Type.String()) })),
  current: Closed({ tier: TierName, requests_per_minute: Type.Integer({ minimum: 0 }), key_id: NullableString }),
  account: Nullable(Closed({ tier: TierName }), { description: 'null without a session' }),
}));
const keyProperties = {
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String(),
  tier: TierName,
  status: StringEnum(['active', 'revoked']),
  created_at: DateTime,
  last_used_at: NullableDateTime,
  revoked_at: NullableDateTime,
};
export const ApiKey = Named('ApiKey', Closed(keyProperties));
export const ApiKeys = Named('ApiKeys', Closed({ keys: Type.Array(ApiKey) }));
export const CreatedApiKey = Named('CreatedApiKey', Closed({ ...keyProperties, key: Type.String({ description: 'The secret: shown in this answer only' }), notice: Type.String() }));
export const SignedOut = Named('SignedOut', Closed({ signed_out: Type.Boolean() }));
const Buckets = Type.Array(Closed({ start: DateTime, count: Type.Integer({ minimum: 0 }) }));
const Totals = Closed({ last_hour: Type.Integer({ minimum: 0 }), last_24h: Type.Integer({ minimum: 0 }), last_30d: Type.Integer({ minimum: 0 }) });
export const Usage = Named('Usage', Closed({
  generated_at: DateTime,
  totals: Totals,
  keys: Type.Array(
    Closed({ key_id: Type.String(), name: Type.String(), prefix: Type.String(), tier: TierName, revoked: Type.Boolean(), totals: Totals, per_minute: Buckets, per_hour: Buckets, per_day: Buckets }),
  ),
}));
export const CreateKeyRequest = Named('CreateKeyRequest', Type.Object({ name: Type.Optional(Type.String({ maxLength: 64 })), tier: Type.Optional(StringEnum(['free', 'pro'])) }));

/** The error object of spec 2.6 / 7; `codes`: every code the server answers with. */
export function errorObject(codes: readonly string[]) {
  return Named('Error', Closed({
    error: Type.String({ description: 'Human-readable message' }),
    code: StringEnum(codes, { description: 'Stable error code (spec section 7)' }),
    details: Type.Object({}, { additionalProperties: true, description: 'Code-specific details, e.g. `provided` for INVALID_IP, `allowed_methods` for METHOD_NOT_ALLOWED' }),
  }));
}
