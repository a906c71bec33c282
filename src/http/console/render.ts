import type { FastifyReply } from 'fastify';
import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

/**
 * The console's content policy: its own stylesheet and script only. No inline script or style,
 * so an injected tag or attribute could not run even if escaping ever failed.
 */
export const CONSOLE_POLICY = [
  "default-src 'none'",
  "base-uri 'none'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "img-src 'self' data:",
  "script-src 'self'",
  "style-src 'self'",
].join('; ');

/** A whole page: preact escapes every text and attribute it renders. */
export function sendPage(reply: FastifyReply, page: VNode, status = 200): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(`<!doctype html>${renderToString(page)}`);
}

/** After a change: the browser loads the next page with GET (post/redirect/get). */
export function redirectTo(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).header('location', location).header('cache-control', 'no-store').send();
}
