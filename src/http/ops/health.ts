import { ping } from '../../db/client.js';
import type { App } from '../app-type.js';

export function healthRoutes(app: App): void {
  app.get('/healthz', async () => ({ status: 'ok' }));

  /** Ready only while the database answers: a load balancer stops sending before calls fail. */
  app.get('/readyz', async (request, reply) => {
    try {
      await ping(app.db);
      return { status: 'ready' };
    } catch (error) {
      request.log.warn({ err: error }, 'database unreachable');
      return reply.code(503).send({ status: 'unavailable' });
    }
  });
}
