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

/**
 * Every answer carries `x-request-id`: the caller's own when it sent a sane one (so its logs and
 * ours line up, as the contract says), else the server's. The server's id still reaches a caller
 * where it matters: it is the `cause` of a "500".
 */
export function stampRequestIds(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', clientRequestIdOf(request.headers) ?? request.id);
}
