import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import type { Services } from '../services.js';

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
    config: Config;
    db: Db;
  }
}

/** The Fastify instance every route file registers on: TypeBox schemas give the handler types. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
