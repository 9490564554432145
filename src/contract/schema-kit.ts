/**
 * Small TypeBox builders that keep every declared answer shape valid OpenAPI
 * 3.0 (no `const`, no `type: 'null'`): string enums and nullable values.
 */
import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';

/** Marks a nullable schema with the schema it wraps, so the document can `$ref` the named inner one. */
export const NULLABLE_OF: unique symbol = Symbol.for('ipintel.nullableOf');

/** A string that is one of `values` (OpenAPI `enum`, typed as their union). */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** `schema` or null (OpenAPI 3.0 `nullable: true`; an enum also lists null, as JSON Schema validators need). */
export function Nullable<S extends TSchema>(schema: S, options: { description?: string } = {}): TUnsafe<Static<S> | null> {
  const out = Type.Unsafe<Static<S> | null>({ ...schema, ...options, nullable: true });
  const values = (schema as TSchema & { enum?: unknown[] }).enum;
  if (Array.isArray(values)) (out as { enum?: unknown[] }).enum = [...values, null];
  // Enumerable, so copies (Optional, spreads) still say what they wrap; JSON output never shows a symbol.
  (out as { [NULLABLE_OF]?: TSchema })[NULLABLE_OF] = schema;
  return out;
}

/** An object whose properties are all `properties` (additionalProperties false), all of them required unless Optional. */
export function Closed<P extends Parameters<typeof Type.Object>[0]>(properties: P, options: { description?: string } = {}) {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

/** Names a declaration (`$id`): the OpenAPI document gives it a component and refers to it by name wherever it is used. */
export function Named<S extends TSchema>(name: string, schema: S): S {
  (schema as { $id?: string }).$id = name;
  return schema;
}

/** A string or null. */
export const NullableString = Nullable(Type.String());
/** An AS number as the API writes it. */
export const AsnText = Type.String({ pattern: '^AS[0-9]+$', description: 'AS<number>' });
