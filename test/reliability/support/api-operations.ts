import type { Harness } from '../../support/harness.js';
import type { JsonSchema } from './schema-arbitrary.js';

export interface Parameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: JsonSchema;
}

/** One operation as /openapi.json describes it: what it takes, and which failure codes it may answer. */
export interface Operation {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** With `{name}` placeholders, prefix included. */
  path: string;
  parameters: Parameter[];
  body: JsonSchema | undefined;
  /** The 299 answer's documented `code` values. */
  codes: ReadonlySet<string>;
}

export interface ApiDocument {
  operations: Operation[];
  resolve(ref: string): JsonSchema;
}

interface RawOperation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
}

/**
 * The operations under `prefix`, read from the server's own OpenAPI document: the fuzzers follow
 * the route schemas as they are, and a new operation is fuzzed as soon as it is registered.
 */
export async function apiDocument(h: Harness, prefix: string): Promise<ApiDocument> {
  const response = await h.app.inject({ method: 'GET', url: '/openapi.json' });
  const doc = response.json() as {
    paths: Record<string, Record<string, RawOperation>>;
    components?: { schemas?: Record<string, JsonSchema> };
  };
  const components = doc.components?.schemas ?? {};
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    if (!path.startsWith(`${prefix}/`)) continue;
    for (const [method, raw] of Object.entries(methods)) {
      const failure = raw.responses?.['299']?.content?.['application/json']?.schema as
        { properties?: { code?: { enum?: string[] } } } | undefined;
      operations.push({
        method: method.toUpperCase() as Operation['method'],
        path,
        parameters: raw.parameters ?? [],
        body: raw.requestBody?.content?.['application/json']?.schema,
        codes: new Set(failure?.properties?.code?.enum ?? []),
      });
    }
  }
  return {
    operations,
    resolve(ref) {
      const name = ref.replace('#/components/schemas/', '');
      const schema = components[name];
      if (!schema) throw new Error(`unknown schema ${ref}`);
      return schema;
    },
  };
}

export const operationName = (op: Operation): string => `${op.method} ${op.path}`;
