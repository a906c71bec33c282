import fs from 'node:fs';
import { compileErrors, validate } from '@readme/openapi-parser';
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_SCHEMA_FILE, renderClientSchema } from '../../scripts/client-schema.js';
import { CommonCode } from '../../src/errors/common-codes.js';
import { MemberCode } from '../../src/errors/member-codes.js';
import { memberOperationCodes } from '../../src/errors/operation-codes.js';
import { OrderCode } from '../../src/errors/order-codes.js';
import { registerApiDocs } from '../../src/http/docs/index.js';
import { registeredRoutes, type RegisteredRoute } from '../../src/http/docs/route-catalog.js';
import { ok as success } from '../../src/http/envelope.js';
import { Envelope, NonceQuery } from '../../src/http/schema-types.js';
import { ME_PREFIX, ORDER_PREFIX, RUNTIME_PREFIX, surfaceOf } from '../../src/http/surface.js';
import { RuntimeCode } from '../../src/errors/runtime-codes.js';
import { startHarness, type Harness } from '../support/harness.js';

interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  schema?: Record<string, unknown>;
}
interface MediaType {
  schema?: { properties?: Record<string, { enum?: unknown[] }>; [key: string]: unknown };
}
interface Operation {
  tags?: string[];
  security?: Array<Record<string, string[]>>;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, { description: string; content?: Record<string, MediaType> }>;
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, { type: string; scheme?: string; in?: string; name?: string }>;
  };
}

/** Runtime calls whose replay is harmless (DOMAIN.md §12): their nonce is optional and not recorded. */
const REPLAYABLE = new Set([
  `POST ${RUNTIME_PREFIX}/leases`,
  `POST ${RUNTIME_PREFIX}/leases/:leaseId/heartbeat`,
  `POST ${RUNTIME_PREFIX}/leases/:leaseId/check-in`,
]);

const openapiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function failureCodes(operation: Operation): unknown[] {
  return operation.responses['299']?.content?.['application/json']?.schema?.properties?.code?.enum ?? [];
}

/**
 * What CI insists on for every route the server really registers: a documented 200 answer on all
 * four surfaces; on the order service, the member center and the runtime also g_nonce, the 299
 * answer with the surface's shared codes and, for the member center, an entry in the per-operation
 * code table.
 */
function documentProblems(document: Document, routes: readonly RegisteredRoute[]): string[] {
  const problems: string[] = [];
  for (const route of routes) {
    const surface = surfaceOf(route.url);
    if (surface !== 'order' && surface !== 'me' && surface !== 'runtime' && surface !== 'oauth') continue;
    const name = `${route.method} ${route.url}`;
    const operation = document.paths[openapiPath(route.url)]?.[route.method.toLowerCase()];
    if (operation === undefined) {
      problems.push(`${name}: missing from the document`);
      continue;
    }
    if (operation.responses['200']?.content?.['application/json']?.schema === undefined) {
      problems.push(`${name}: no 200 response schema`);
    }
    if (surface === 'oauth') continue;
    const nonce = operation.parameters?.find((p) => p.in === 'query' && p.name === 'g_nonce');
    if (REPLAYABLE.has(name)) {
      if (nonce === undefined || nonce.required === true) problems.push(`${name}: g_nonce not optional`);
    } else if (nonce?.required !== true) problems.push(`${name}: no required g_nonce query parameter`);
    const codes = failureCodes(operation);
    const shared: string[] =
      surface === 'order'
        ? [
            OrderCode.validation,
            CommonCode.appTokenInvalid,
            CommonCode.securityCheckFailed,
            CommonCode.internal,
          ]
        : surface === 'runtime'
          ? [
              RuntimeCode.validation,
              CommonCode.appTokenInvalid,
              CommonCode.securityCheckFailed,
              CommonCode.internal,
            ]
          : [
              CommonCode.appTokenInvalid,
              CommonCode.userTokenInvalid,
              CommonCode.securityCheckFailed,
              CommonCode.internal,
            ];
    if (!shared.every((code) => codes.includes(code))) problems.push(`${name}: no 299 answer with its codes`);
    if (
      surface === 'me' &&
      memberOperationCodes(route.method, route.url.slice(ME_PREFIX.length)) === undefined
    ) {
      problems.push(`${name}: not listed in src/errors/operation-codes.ts`);
    }
  }
  return problems;
}

let h: Harness;
let document: Document;

beforeAll(async () => {
  h = await startHarness();
  const response = await h.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(response.statusCode).toBe(200);
  document = response.json() as Document;
});
afterAll(async () => h.close());

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });

  it('documents every registered order, member-center, runtime and token route completely', () => {
    const routes = registeredRoutes(h.app);
    expect(routes.some((r) => r.url === `${ORDER_PREFIX}/shellnums`)).toBe(true);
    expect(routes.some((r) => r.url === `${RUNTIME_PREFIX}/leases`)).toBe(true);
    expect(documentProblems(document, routes)).toEqual([]);
  });

  it('keeps the admin API and the ops routes out, except the health probes', () => {
    const paths = Object.keys(document.paths);
    expect(paths.filter((p) => p.startsWith('/admin'))).toEqual([]);
    for (const hidden of ['/metrics', '/openapi.json', '/docs', '/docs/json'])
      expect(paths).not.toContain(hidden);
    expect(document.paths['/healthz']?.get?.tags).toEqual(['ops']);
    expect(document.paths['/readyz']?.get?.responses['503']).toBeDefined();
  });

  it('documents the JWKS that verifies offline leases, without security', () => {
    const operation = document.paths['/.well-known/jwks.json']?.get as Operation & { security?: unknown };
    expect(operation.tags).toEqual(['runtime']);
    // Declared empty, so generators and linters know it needs no credential.
    expect(operation.security).toEqual([]);
    expect(operation.responses['200']?.content?.['application/json']?.schema).toMatchObject({
      required: ['keys'],
    });
  });

  it('declares the security schemes and applies them per surface', () => {
    expect(document.components.securitySchemes).toMatchObject({
      appToken: { type: 'http', scheme: 'bearer' },
      clientToken: { type: 'apiKey', in: 'header', name: 'clientToken' },
      userToken: { type: 'apiKey', in: 'header', name: 'userToken' },
      clientBasic: { type: 'http', scheme: 'basic' },
    });
    expect(document.paths[`${ORDER_PREFIX}/shellnums`]?.post?.security).toEqual([{ appToken: [] }]);
    expect(document.paths['/oauth2/token']?.post?.security).toEqual([{ clientBasic: [] }, {}]);
  });

  it('renders an integer field as an integer or a string of digits, without x-int', () => {
    expect(JSON.stringify(document)).not.toContain('x-int');
    const body = document.paths[`${ORDER_PREFIX}/shellnums`]?.post?.requestBody?.content['application/json'];
    expect(body?.schema?.properties?.size).toEqual({
      anyOf: [
        { type: 'integer', minimum: 1, maximum: 1000 },
        { type: 'string', pattern: '^-?[0-9]+$' },
      ],
    });
  });

  it("states the nonce's rule and lists the order service's codes on the 299 answer", () => {
    const operation = document.paths[`${ORDER_PREFIX}/shellnums`]?.post as Operation;
    const nonce = operation.parameters?.find((p) => p.name === 'g_nonce');
    expect(nonce?.schema?.pattern).toBe('^[A-Za-z0-9_-]{8,64}$');
    expect(failureCodes(operation)).toEqual(['13004', '500', '60000', '70001']);
    expect(operation.responses['299']?.description).toContain('`13004` | parameter validation failure');
    expect(operation.responses['429']).toBeDefined();
  });

  it('documents the token endpoint with form and JSON bodies and RFC 6749 answers', () => {
    const operation = document.paths['/oauth2/token']?.post as Operation;
    expect(Object.keys(operation.requestBody?.content ?? {})).toEqual([
      'application/x-www-form-urlencoded',
      'application/json',
    ]);
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '401']));
    const answer = operation.responses['200']?.content?.['application/json']?.schema;
    expect(answer).toMatchObject({ required: ['access_token', 'token_type', 'expires_in', 'scope'] });
  });
});

describe('the completeness check', () => {
  const app = Fastify().withTypeProvider<TypeBoxTypeProvider>();
  beforeAll(async () => {
    await registerApiDocs(app);
    const query = { querystring: Type.Object(NonceQuery) };
    const ok = { 200: Envelope(Type.Null()) };
    app.post(`${ORDER_PREFIX}/no-response`, { schema: query }, async () => success(null));
    app.post(`${ORDER_PREFIX}/no-nonce`, { schema: { response: ok } }, async () => success(null));
    app.get(`${ME_PREFIX}/unlisted`, { schema: { ...query, response: ok } }, async () => success(null));
    app.post(`${ME_PREFIX}/enterprise/:enterprise/member`, { schema: { ...query, response: ok } }, async () =>
      success(null),
    );
    await app.ready();
  });
  afterAll(async () => app.close());

  it('fails a route without a 200 schema, without g_nonce, or missing from the code table', () => {
    const problems = documentProblems(app.swagger() as unknown as Document, registeredRoutes(app));
    expect(problems).toEqual([
      `POST ${ORDER_PREFIX}/no-response: no 200 response schema`,
      `POST ${ORDER_PREFIX}/no-nonce: no required g_nonce query parameter`,
      `GET ${ME_PREFIX}/unlisted: not listed in src/errors/operation-codes.ts`,
    ]);
  });

  it("attaches a member-center operation's own codes from the table, whatever its parameter is called", () => {
    const doc = app.swagger() as unknown as Document;
    const codes = failureCodes(doc.paths[`${ME_PREFIX}/enterprise/{enterprise}/member`]?.post as Operation);
    expect(codes).toEqual(
      expect.arrayContaining([
        CommonCode.appTokenInvalid,
        CommonCode.userTokenInvalid,
        CommonCode.securityCheckFailed,
        CommonCode.internal,
        MemberCode.tooManyUsers,
        MemberCode.partialFailure,
        MemberCode.userCenter,
      ]),
    );
    expect(codes).not.toContain(MemberCode.lentLockTaken);
  });
});

describe('GET /docs', () => {
  it('serves the reference page and its scripts from this server', async () => {
    const page = await h.app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(source).not.toMatch(/^(https?:)?\/\//);
      const asset = await h.app.inject({ method: 'GET', url: source.replace(/^\.\//, '/docs/') });
      expect(asset.statusCode, source).toBe(200);
    }
  });

  it('serves the page under a content policy that runs only its own scripts, never framed', async () => {
    const page = await h.app.inject({ method: 'GET', url: '/docs' });
    const policy = String(page.headers['content-security-policy']);
    const directives = new Map(
      policy.split(';').map((d) => {
        const [name = '', ...values] = d.trim().split(/\s+/);
        return [name, values] as const;
      }),
    );
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('script-src-attr')).toEqual(["'none'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(directives.get('object-src')).toEqual(["'none'"]);
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    // Nothing the policy would block: every script is a same-origin file, no handler attribute.
    const scripts = [...page.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes = '', body = ''] of scripts) {
      expect(attributes).toMatch(/\bsrc="\.?\/?[^":]+"/);
      expect(body.trim()).toBe('');
    }
    expect(page.body).not.toMatch(/\son[a-z]+=/i);
    const script = await h.app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toContain('javascript');
    expect(script.headers['x-content-type-options']).toBe('nosniff');
  });

  it('serves a page script that parses, with the nonce interceptor in it', async () => {
    const script = await h.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(script.body).toContain('"requestInterceptor":');
    expect(() => new Function(script.body)).not.toThrow();
  });
});

describe('the typed client', () => {
  it('was generated from this document (run `npm run client:generate` when this fails)', async () => {
    const committed = fs.readFileSync(CLIENT_SCHEMA_FILE, 'utf8');
    expect(await renderClientSchema(h.app.swagger())).toBe(committed);
  });
});
