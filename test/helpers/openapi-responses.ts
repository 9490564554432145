/**
 * Checks real answers against /openapi.json: the operation exists, the
 * status and media type are declared, the headers the server sent are
 * declared, and the body validates (ajv, strict, with formats) against the
 * declared schema. OpenAPI 3.0 `nullable` is turned into JSON Schema's null
 * type first; nothing else of the document is changed.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

type Json = Record<string, any>;

/** One answer as the test received it. */
export interface SeenAnswer {
  method: string;
  /** The path as sent (no query). */
  path: string;
  status: number;
  headers: Headers;
  text: string;
}

const CHECKED_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-tier', 'retry-after', 'etag', 'allow', 'cache-control'];

/** OpenAPI 3.0 schema -> JSON Schema: `nullable` becomes a null type, refs point into `definitions`. */
export function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (k === '$ref') out.$ref = (v as string).replace('#/components/schemas/', 'api#/definitions/');
    else if (k === 'nullable') continue;
    else if (k === 'properties' || k === 'definitions') out[k] = Object.fromEntries(Object.entries(v as Json).map(([p, s]) => [p, toJsonSchema(s)]));
    else out[k] = toJsonSchema(v);
  }
  if ((node as Json).nullable === true) {
    if (out.type !== undefined) return { ...out, type: [out.type, 'null'] };
    return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

/** Validates answers against one OpenAPI document. */
export class OpenApiResponses {
  private readonly ajv = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true });
  private readonly compiled = new Map<unknown, ValidateFunction>();
  private readonly templates: Array<{ template: string; pattern: RegExp; params: number }>;
  /** Operation and status of every answer checked, `METHOD /template status`. */
  readonly seen = new Set<string>();

  constructor(private readonly doc: Json) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: 'api', definitions: toJsonSchema(doc.components.schemas) }, 'api');
    this.templates = Object.keys(doc.paths)
      .map((template) => ({
        template,
        pattern: new RegExp('^' + template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+') + '$'),
        params: (template.match(/\{/g) ?? []).length,
      }))
      .sort((a, b) => a.params - b.params);
  }

  /** The path template an actual path falls under (static paths before parameters, as the router does). */
  templateOf(path: string): string | null {
    return this.templates.find((t) => t.pattern.test(path))?.template ?? null;
  }

  private validator(schema: unknown): ValidateFunction {
    let v = this.compiled.get(schema);
    if (!v) this.compiled.set(schema, (v = this.ajv.compile(toJsonSchema(schema) as Json)));
    return v;
  }

  /** A path no route answers: the spec's 404 error object. */
  private undocumentedPath(a: SeenAnswer, where: string): string[] {
    const validate = this.validator({ $ref: '#/components/schemas/Error' });
    if ((a.headers.get('content-type') ?? '').startsWith('application/json') && validate(JSON.parse(a.text))) return [];
    return [`${where}: not the error object: ${a.text.slice(0, 200)}`];
  }

  /** Every way the answer departs from the document (empty: it conforms). */
  problems(a: SeenAnswer): string[] {
    const where = `${a.method} ${a.path} -> ${a.status}`;
    const template = this.templateOf(a.path);
    if (template === null) return a.status === 404 ? this.undocumentedPath(a, where) : [`${where}: no documented path`];
    const item = this.doc.paths[template];
    // A method the path does not take has no operation: its 405 is the one every operation of the path declares.
    const op = item[a.method === 'HEAD' ? 'get' : a.method.toLowerCase()] ?? (a.status === 405 ? Object.values(item)[0] : undefined);
    if (!op) return [`${where}: ${a.method} not documented on ${template}`];
    const response = op.responses[String(a.status)];
    if (!response) return [`${where}: status not documented on ${a.method} ${template}`];
    this.seen.add(`${a.method} ${template} ${a.status}`);
    const out: string[] = [];
    for (const h of CHECKED_HEADERS) {
      if (!a.headers.has(h)) continue;
      const declared = Object.keys(response.headers ?? {}).some((d) => d.toLowerCase() === h);
      if (!declared) out.push(`${where}: header ${h} sent but not declared`);
    }
    if (a.status === 405 && !a.headers.has('allow')) out.push(`${where}: 405 without Allow`);
    if (a.text === '') return out;
    const media = (a.headers.get('content-type') ?? '').split(';')[0]!.trim();
    const content = response.content?.[media];
    if (!content) return [...out, `${where}: media type ${media} not documented`];
    const body = media === 'application/json' ? JSON.parse(a.text) : a.text;
    const validate = this.validator(content.schema);
    if (!validate(body)) out.push(`${where}: ${this.ajv.errorsText(validate.errors, { separator: '; ' })} in ${a.text.slice(0, 300)}`);
    return out;
  }
}
