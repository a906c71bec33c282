import type { FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
import { CommonCode } from '../../errors/common-codes.js';
import {
  codeMessage,
  memberOperationCodes,
  memberSharedCodes,
  orderOperationCodes,
  runtimeOperationCodes,
  webhookOperationCodes,
} from '../../errors/operation-codes.js';
import { MemberCode } from '../../errors/member-codes.js';
import { NONCE_PATTERN } from '../../domain/gate/gate.js';
import { FailureEnvelope } from '../schema-types.js';
import { ME_PREFIX, RUNTIME_PREFIX, surfaceOf, WEBHOOKS_PREFIX } from '../surface.js';
import { JWKS_PATH } from '../runtime/jwks.js';
import { webhooksDocument } from './webhooks-document.js';
import { Scheme, Tag } from './document-base.js';

/** The only ops routes worth documenting: what a load balancer probes, and what software verifies with. */
const DOCUMENTED_OPS = new Map<string, string>([
  ['/healthz', Tag.ops],
  ['/readyz', Tag.ops],
  [JWKS_PATH, Tag.runtime],
]);

type DocSchema = FastifySchema & {
  hide?: boolean;
  tags?: string[];
  security?: Array<Record<string, string[]>>;
  response?: Record<string, unknown>;
};

/** A 299 (or 429, 503) answer whose `code` is one of `codes`, with the table's meaning of each. */
function failureAnswer(summary: string, codes: readonly string[]) {
  const unique = [...new Set(codes)];
  const table = unique.map((code) => `| \`${code}\` | ${codeMessage(code)} |`).join('\n');
  return {
    description: `${summary}\n\n| code | meaning |\n|---|---|\n${table}`,
    content: {
      'application/json': {
        schema: {
          ...FailureEnvelope,
          properties: {
            ...FailureEnvelope.properties,
            code: { type: 'string', enum: unique, description: 'business code' },
          },
        },
      },
    },
  };
}

function firstMethod(route: RouteOptions): string {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  return methods.find((m) => m !== 'HEAD') ?? 'GET';
}

function businessCodes(
  surface: 'order' | 'me' | 'runtime' | 'webhooks',
  method: string,
  url: string,
): readonly string[] {
  if (surface === 'order') return orderOperationCodes;
  if (surface === 'webhooks') return webhookOperationCodes(method, url.slice(WEBHOOKS_PREFIX.length));
  if (surface === 'runtime') return runtimeOperationCodes(method, url.slice(RUNTIME_PREFIX.length));
  // An unlisted member route still shows what every member-center call can answer; the OpenAPI
  // test insists that each one is listed.
  return (
    memberOperationCodes(method, url.slice(ME_PREFIX.length)) ?? [
      ...memberSharedCodes,
      MemberCode.paramEmpty,
      MemberCode.permission,
    ]
  );
}

/** Names the success answer, unless the route did (@fastify/swagger's own keyword). */
function describeSuccess(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || 'description' in schema) return schema;
  return { ...schema, 'x-response-description': "Handled: `code` 0 and the operation's `data`" };
}

/** A lock holder presents the app token only; a member holder adds his user token. */
const runtimeSecurity: Array<Record<string, string[]>> = [
  { [Scheme.appToken]: [] },
  { [Scheme.appToken]: [], [Scheme.userToken]: [] },
];

const memberSecurity: Array<Record<string, string[]>> = [
  { [Scheme.appToken]: [], [Scheme.userToken]: [] },
  { [Scheme.clientToken]: [], [Scheme.userToken]: [] },
];

/**
 * @fastify/swagger `transform`: keeps the admin API and most ops routes out of the document and
 * attaches what route files do not repeat: tags, security, and the failure answers with each
 * operation's codes. Works on copies; the route's own schema still drives validation.
 */
export function transformRoute({
  schema,
  url,
  route,
}: {
  schema: FastifySchema;
  url: string;
  route: RouteOptions;
}): { schema: FastifySchema; url: string } {
  const own = (schema ?? {}) as DocSchema;
  const surface = surfaceOf(url);
  switch (surface) {
    case 'admin':
    case 'console':
      return { schema: { ...own, hide: true } as FastifySchema, url };
    case 'ops':
      return {
        schema: (DOCUMENTED_OPS.has(url)
          ? { ...own, tags: [DOCUMENTED_OPS.get(url)], security: [] }
          : { ...own, hide: true }) as FastifySchema,
        url,
      };
    case 'oauth':
      return {
        schema: { ...own, tags: [Tag.oauth], security: [{ [Scheme.clientBasic]: [] }, {}] } as FastifySchema,
        url,
      };
    case 'order':
    case 'me':
    case 'runtime':
    case 'webhooks': {
      const codes = businessCodes(surface, firstMethod(route), url);
      const documented: DocSchema = {
        ...own,
        tags: [
          surface === 'order'
            ? Tag.order
            : surface === 'me'
              ? Tag.member
              : surface === 'runtime'
                ? Tag.runtime
                : Tag.webhooks,
        ],
        security:
          surface === 'order' || surface === 'webhooks'
            ? [{ [Scheme.appToken]: [] }]
            : surface === 'me'
              ? memberSecurity
              : runtimeSecurity,
        response: {
          ...own.response,
          ...(own.response?.[200] === undefined ? {} : { 200: describeSuccess(own.response[200]) }),
          299: failureAnswer('Business failure: `code` says which, `message` and `cause` explain it.', codes),
          429: failureAnswer('Over the per-app rate limit; retry in the next minute.', [
            CommonCode.rateLimited,
          ]),
          503: failureAnswer(
            'Overloaded (no database connection came free in time, or the event loop runs late); retry after `Retry-After` seconds.',
            [CommonCode.overloaded],
          ),
        },
      };
      return { schema: documented as FastifySchema, url };
    }
  }
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** `x-int` is for the validator only: the document shows the anyOf it sits beside. */
function withoutIntKeyword(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutIntKeyword);
  if (value === null || typeof value !== 'object') return value;
  const out: { [key: string]: Json } = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key !== 'x-int') out[key] = withoutIntKeyword(inner);
  }
  return out;
}

interface ParameterLike {
  name?: string;
  in?: string;
  schema?: Record<string, unknown>;
  example?: string;
}

/**
 * The nonce's rule lives in the guard, which must answer 70001 rather than a validation code;
 * the document still states it, with an example "Try it out" can start from.
 */
function describeNonce(document: { paths?: Record<string, Record<string, unknown>> }): void {
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item)) {
      const parameters = (operation as { parameters?: ParameterLike[] }).parameters ?? [];
      for (const parameter of parameters) {
        if (parameter.in !== 'query' || parameter.name !== 'g_nonce') continue;
        parameter.schema = { ...parameter.schema, pattern: NONCE_PATTERN.source };
        parameter.example = 'nonce-0123456789';
      }
    }
  }
}

/**
 * The document as one caller sees it: `servers` is where that caller reached this server, so a
 * generator or "Try it out" calls the same place (behind a proxy, as TRUST_PROXY lets Fastify see it).
 */
export function documentFor<T extends object>(
  document: T,
  request: FastifyRequest,
): T & { servers: Array<{ url: string }> } {
  return { ...document, servers: [{ url: `${request.protocol}://${request.host}` }] };
}

/** @fastify/swagger `transformObject`: the finishing touches on the whole document. */
export function transformDocument<T extends object>(openapiObject: T): T {
  const document = withoutIntKeyword(structuredClone(openapiObject) as Json) as {
    paths?: Record<string, Record<string, unknown>>;
  };
  describeNonce(document);
  (document as { webhooks?: unknown }).webhooks = webhooksDocument();
  return document as T;
}
