import Fastify from 'fastify';
import { openPostgres } from '../src/db/client.js';

// R1: what the stack gives without Keyward — Fastify, Kysely and the same pg pool (openPostgres,
// so the same size and settings), one primary-key SELECT, no authentication, no logging.

const url = process.env.DATABASE_URL;
if (url === undefined) throw new Error('DATABASE_URL is required');
const database = await openPostgres(url);
const app = Fastify({ logger: false });

const Customer = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    channelCode: { type: ['string', 'null'] },
    name: { type: ['string', 'null'] },
    enterpriseId: { type: ['integer', 'null'] },
  },
} as const;

app.get('/healthz', async () => ({ status: 'ok' }));

app.get<{ Params: { id: string } }>(
  '/ref/customers/:id',
  { schema: { response: { 200: Customer } } },
  async (request, reply) => {
    const row = await database.db
      .selectFrom('customers')
      .select(['id', 'channel_code', 'name', 'enterprise_id'])
      .where('id', '=', request.params.id)
      .executeTakeFirst();
    if (!row) return reply.code(404).send();
    return { id: row.id, channelCode: row.channel_code, name: row.name, enterpriseId: row.enterprise_id };
  },
);

const close = () => {
  void app
    .close()
    .then(() => database.close())
    .then(() => process.exit(0));
};
process.on('SIGTERM', close);
process.on('SIGINT', close);
await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
