import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { CommonCode, commonMessages } from '../errors/common-codes.js';
import { failure } from './envelope.js';
import { OPERATOR_CONSOLE_PREFIX, surfaceOf } from './surface.js';

/** Requests that came in through the admin listener (and only those). */
const viaAdminListener = new WeakSet<IncomingMessage>();

/**
 * With a listener of its own, the admin API is not on the public one: there /admin/* is an unknown
 * path (404 before the admin key is even looked at, so nothing says it exists), and the admin
 * listener serves /admin/* alone. The console's operator area goes with the admin API. Both listeners hand requests to the same app, so the admin
 * routes, hooks and error handling are one code path.
 */
export function keepAdminApart(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    const adminPath = surfaceOf(request.url) === 'admin' || request.url.startsWith(OPERATOR_CONSOLE_PREFIX);
    if (adminPath === viaAdminListener.has(request.raw)) return;
    const path = request.url.split('?')[0] ?? '';
    return reply
      .code(404)
      .send(failure(CommonCode.notFound, commonMessages[CommonCode.notFound], `${request.method} ${path}`));
  });
}

export interface AdminListener {
  url: string;
  close(): Promise<void>;
}

/** Opens the admin listener on `host:port`, serving through `app` (already listening). */
export async function listenForAdmin(
  app: FastifyInstance,
  where: { host: string; port: number },
): Promise<AdminListener> {
  const server = http.createServer((request, response) => {
    viaAdminListener.add(request);
    app.routing(request, response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(where.port, where.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
