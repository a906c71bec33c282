import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** A caller's own request id is kept only when it is a short token of these characters. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The id the caller sent in `x-request-id`, when it is sane; else undefined (never stored or
 * echoed raw). It is the caller's word only: the server's own id (`request.id`, always generated)
 * is what the logs, audit rows and "500" causes rely on, since a caller may send any id twice.
 */
export function clientRequestIdOf(headers: IncomingHttpHeaders): string | undefined {
  const given = headers['x-request-id'];
  return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : undefined;
}

/** Every answer says the server's id (`x-request-id`) and echoes a sane id of the caller's. */
export function stampRequestIds(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  const client = clientRequestIdOf(request.headers);
  if (client !== undefined) reply.header('x-client-request-id', client);
}
