/**
 * The named schemas of /openapi.json and their conversion from the TypeBox
 * declarations (src/contract/) into OpenAPI 3.0 schema objects: every nested
 * declaration that has a name becomes a `$ref`, so a client generator gets
 * one named type per declared shape.
 */
import type { TSchema } from '@sinclair/typebox';
import * as v1 from '../../contract/v1.ts';
import * as lookups from '../../contract/lookups.ts';
import * as service from '../../contract/service.ts';
import * as diff from '../../contract/diff.ts';
import { NULLABLE_OF } from '../../contract/schema-kit.ts';
import { ERROR_STATUS } from '../../api-error.ts';

/** The error object, its `code` an enum of every code the server answers with. */
export const ErrorObject = service.errorObject(Object.keys(ERROR_STATUS));

/** Component name -> declaration, in document order. */
export const NAMED_SCHEMAS: Readonly<Record<string, TSchema>> = {
  V1Object: v1.V1Object,
  V1Projection: v1.V1Projection,
  Location: v1.Location,
  Network: v1.Network,
  Allocation: v1.Allocation,
  Routability: v1.Routability,
  Routing: v1.Routing,
  Score: v1.Score,
  Classification: v1.Classification,
  Evidence: v1.Evidence,
  Signal: v1.Signal,
  ThreatFeed: v1.ThreatFeed,
  Decision: v1.Decision,
  SubScores: v1.SubScores,
  Scenarios: v1.Scenarios,
  Scenario: v1.Scenario,
  Explanation: v1.Explanation,
  Driver: v1.Driver,
  Rdap: v1.Rdap,
  AsOf: v1.AsOf,
  RdapNetwork: v1.RdapNetwork,
  RdapContact: v1.RdapContact,
  AsnObject: lookups.AsnObject,
  ThreatDensity: lookups.ThreatDensity,
  AsnDrop: lookups.AsnDrop,
  Assessment: lookups.Assessment,
  StackAssessment: lookups.StackAssessment,
  PairAssessment: lookups.PairAssessment,
  LegacyObject: lookups.LegacyObject,
  CrawlerVerification: lookups.CrawlerVerification,
  CrawlerVerifyRequest: lookups.CrawlerVerifyRequest,
  Health: service.Health,
  DataStatus: service.DataStatus,
  FeedsStatus: service.FeedsStatus,
  SwapSummary: diff.SwapSummary,
  Reload: service.Reload,
  User: service.User,
  Me: service.Me,
  Tiers: service.Tiers,
  ApiKey: service.ApiKey,
  ApiKeys: service.ApiKeys,
  CreatedApiKey: service.CreatedApiKey,
  CreateKeyRequest: service.CreateKeyRequest,
  SignedOut: service.SignedOut,
  Usage: service.Usage,
  Error: ErrorObject,
};

type Json = Record<string, unknown>;
const nameOf = (schema: TSchema): string | undefined => (schema as { $id?: string }).$id;

/** A `$ref` to a named component. */
export function ref(name: keyof typeof NAMED_SCHEMAS & string): Json {
  if (!(name in NAMED_SCHEMAS)) throw new Error(`no schema named ${name}`);
  return { $ref: `#/components/schemas/${name}` };
}

/** A declaration as an OpenAPI schema; `self` (a component's own name) is written out, every other named one is a `$ref`. */
export function toOpenApi(schema: TSchema, self?: string): Json {
  // A nullable named declaration: OpenAPI 3.0 ignores siblings of $ref, so it wraps the reference.
  const inner = (schema as { [NULLABLE_OF]?: TSchema })[NULLABLE_OF];
  if (inner !== undefined && nameOf(inner) !== undefined) {
    const description = (schema as { description?: string }).description;
    return { nullable: true, allOf: [{ $ref: `#/components/schemas/${nameOf(inner)}` }], ...(description ? { description } : {}) };
  }
  // Copies of a named declaration (Optional, spreads) keep its $id, so they refer to it too.
  const name = inner === undefined ? nameOf(schema) : undefined;
  if (name !== undefined && name !== self) return { $ref: `#/components/schemas/${name}` };
  const out: Json = {};
  // JSON keys only: TypeBox keeps its bookkeeping under symbols; $id is the component's name.
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$id') continue;
    else if (key === 'properties') out.properties = Object.fromEntries(Object.entries(value as Record<string, TSchema>).map(([k, v]) => [k, toOpenApi(v)]));
    else if (key === 'items' || (key === 'additionalProperties' && typeof value === 'object')) out[key] = toOpenApi(value as TSchema);
    else if (key === 'required' && Array.isArray(value) && value.length === 0) continue;
    else out[key] = structuredClone(value);
  }
  return out;
}

/** Every named schema as `components.schemas`. */
export function componentSchemas(): Record<string, Json> {
  for (const [name, schema] of Object.entries(NAMED_SCHEMAS)) if (nameOf(schema) !== name) throw new Error(`schema ${name} is declared as ${nameOf(schema)}`);
  return Object.fromEntries(Object.entries(NAMED_SCHEMAS).map(([name, schema]) => [name, toOpenApi(schema, name)]));
}
