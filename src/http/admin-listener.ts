import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { CommonCode, commonMessages } from '../errors/common-codes.js';
import { capConnections, connectionOptions } from './connection-bounds.js';
import { failure } from './envelope.js';
import type { Listener } from './access/access.js';

/** Requests that came in through the admin listener (and only those). */
const viaAdminListener = new WeakSet<IncomingMessage>();

/**
 * Which listener a request came through. With a listener of its own, the admin API and the
 * operator's console are served there alone (access/access.ts, listenersOf): both listeners hand
 * requests to the same app, so routes, hooks and error handling are one code path.
 */
export function listenerOf(request: FastifyRequest): Listener {
  return viaAdminListener.has(request.raw) ? 'admin' : 'public';
}

/** A route not served on this listener is answered as an unknown path: nothing says it exists. */
export function notOnThisListener(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0] ?? '';
  return reply
    .code(404)
    .send(failure(CommonCode.notFound, commonMessages[CommonCode.notFound], `${request.method} ${path}`));
}

export interface AdminListener {
  url: string;
  close(): Promise<void>;
}

/**
 * Opens the admin listener on `host:port`, serving through `app` (already listening). It has the
 * public listener's bounds on connections (connection-bounds.ts), from the same settings, and a
 * cap of its own: slow senders on either listener cannot hold the other's connections.
 */
export async function listenForAdmin(
  app: FastifyInstance,
  where: { host: string; port: number },
  connections: Config['connections'],
): Promise<AdminListener> {
  const server = http.createServer(connectionOptions(connections), (request, response) => {
    viaAdminListener.add(request);
    app.routing(request, response);
  });
  capConnections(server, connections);
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
