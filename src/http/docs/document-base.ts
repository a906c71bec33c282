import { createRequire } from 'node:module';
import type { OpenAPIV3_1 } from 'openapi-types';
import { FailureEnvelope } from '../schema-types.js';
import { ME_PREFIX, ORDER_PREFIX, RUNTIME_PREFIX, WEBHOOKS_PREFIX } from '../surface.js';

const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string };

/** Names of the security schemes, as operations refer to them. */
export const Scheme = {
  appToken: 'appToken',
  clientToken: 'clientToken',
  userToken: 'userToken',
  clientBasic: 'clientBasic',
} as const;

export const Tag = {
  order: 'order',
  member: 'member',
  runtime: 'runtime',
  webhooks: 'webhooks',
  oauth: 'oauth',
  ops: 'ops',
} as const;

const description = `Keyward serves four surfaces: the **order service** (\`${ORDER_PREFIX}\`), the **member
center** (\`${ME_PREFIX}\`), the **license runtime** (\`${RUNTIME_PREFIX}\`) and the **token endpoint**
(\`/oauth2/token\`, RFC 6749).

**Words.** Each operation of the order service and the member center says what it does, then in
parentheses its name and number in the interface documents (order op 1–9, member op 1–10), or the
operation it adds to; the license runtime, webhooks and tokens are Keyward's own. The documents'
words (such as shellnums, gongxin customer or status 299) are explained in the
[glossary](/docs/glossary).

**Answers.** A call that did what it was asked answers HTTP 200 with
\`{"code":0,"message":"success","data":…}\`. A call refused for a reason of the business (an
unknown customer, a lock lent already) answers status \`299\`, which is not an HTTP error, with
\`{"code":"<digits>","message":"…","cause":"…"}\` (the FailureEnvelope): \`code\` says which
refusal, and each operation lists the codes it may answer. An internal fault is code \`"500"\`
with the request id as \`cause\`. Over the per-app rate limit: HTTP 429, code \`"429"\`.

**Integers.** Integer fields accept a JSON integer or a string of digits (\`"sequence":"0"\`).

**Calls.** Every call to the order service or the member center carries a fresh \`g_nonce\` query
parameter (8–64 of \`A-Za-z0-9_-\`, accepted once per application) and an app token from
\`grant_type=client_credentials\`: as \`Authorization: Bearer …\`, or in the member center as the
\`clientToken\` header. The member center also needs a member's \`userToken\` from
\`grant_type=password\`. On this page, "Try it out" replaces \`g_nonce\` with a fresh value on every call.`;

/** The parts of the document that no route carries: info, tags, security schemes, the envelope. */
export const documentBase: Partial<OpenAPIV3_1.Document> = {
  openapi: '3.1.0',
  info: {
    title: 'Keyward API',
    version,
    description,
    license: { name: 'Apache License 2.0', identifier: 'Apache-2.0' },
  },
  tags: [
    {
      name: Tag.order,
      description: `License orders, enterprises, locks and asset numbers (${ORDER_PREFIX}).`,
    },
    { name: Tag.member, description: `Employees of an enterprise and their assets (${ME_PREFIX}).` },
    {
      name: Tag.runtime,
      description: `The license runtime (${RUNTIME_PREFIX}): licensed software checks out a seat, heartbeats, checks in and consumes; scope auth_runtime. Offline leases are compact JWS (EdDSA) that the vendor's software verifies with the keys at /.well-known/jwks.json.`,
    },
    {
      name: Tag.webhooks,
      description: `An app's webhook endpoints (${WEBHOOKS_PREFIX}/endpoints, scope auth_webhooks), and the events they receive (the document's webhooks): signed by the Standard Webhooks scheme, delivered at least once, retried for 3 days.`,
    },
    { name: Tag.oauth, description: 'App tokens and member tokens (RFC 6749).' },
    { name: Tag.ops, description: 'Liveness and readiness for load balancers and orchestrators.' },
  ],
  components: {
    securitySchemes: {
      [Scheme.appToken]: {
        type: 'http',
        scheme: 'bearer',
        description:
          'App token from POST /oauth2/token with grant_type=client_credentials. The application needs scope auth_order for the order service, auth_me for the member center, auth_runtime for the license runtime, auth_webhooks for webhook endpoints.',
      },
      [Scheme.clientToken]: {
        type: 'apiKey',
        in: 'header',
        name: 'clientToken',
        description: 'Member center: the app token, instead of (or equal to) Authorization: Bearer.',
      },
      [Scheme.userToken]: {
        type: 'apiKey',
        in: 'header',
        name: 'userToken',
        description:
          "Member center: a member's token from POST /oauth2/token with grant_type=password, asked for by the same application.",
      },
      [Scheme.clientBasic]: {
        type: 'http',
        scheme: 'basic',
        description:
          'appKey:appSecret (RFC 6749 §2.3.1). Alternatively client_id and client_secret in the body.',
      },
    },
    // A TypeBox schema is plain JSON Schema; only its TypeScript type differs from openapi-types'.
    schemas: { FailureEnvelope: FailureEnvelope as OpenAPIV3_1.SchemaObject },
  },
};
