import { Type } from 'typebox';
import { databaseReadiness } from '../../db/client.js';
import type { App } from '../app-type.js';
import { StringEnum } from '../schema-types.js';
import { ACCESS } from '../access/access.js';

const Status = (values: readonly string[], description: string) =>
  Type.Object({ status: StringEnum(values) }, { description });

export function healthRoutes(app: App): void {
  app.get(
    '/healthz',
    {
      config: { access: ACCESS.public },
      schema: {
        operationId: 'checkLiveness',
        summary: 'Liveness: the process answers',
        response: { 200: Status(['ok'], 'The process is up') },
      },
    },
    async () => ({ status: 'ok' }),
  );

  /**
   * Ready only while the database answers: a load balancer stops sending before calls fail. Asked
   * apart from the request pool (databaseReadiness): a busy instance is still a ready one.
   */
  app.get(
    '/readyz',
    {
      config: { access: ACCESS.public },
      schema: {
        operationId: 'checkReadiness',
        summary: 'Readiness: the database answers',
        response: {
          200: Status(['ready'], 'Ready to serve'),
          503: Status(['unavailable'], 'The database does not answer'),
        },
      },
    },
    async (request, reply) => {
      const readiness = databaseReadiness(app.db);
      if (await readiness.answers()) return { status: 'ready' };
      request.log.warn({ err: readiness.lastFailure }, 'database unreachable');
      return reply.code(503).send({ status: 'unavailable' });
    },
  );
}
