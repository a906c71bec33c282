import type { FastifyInstance, FastifyReply } from 'fastify';

/** The API answers JSON only: nothing in an answer may run, load, frame or be framed. */
const API_POLICY = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The reference page at /docs: Swagger UI's own scripts and styles, all served from this origin
 * (no inline script; its components set inline styles, and its logo is a data: image). It fetches
 * only /docs/json and, from "Try it out", this server.
 */
export const DOCS_POLICY = [
  "default-src 'self'",
  "base-uri 'none'",
  "connect-src 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'",
].join('; ');

/**
 * Headers on every answer: no type sniffing, no framing, no referrer, and a content policy (the
 * docs plugin replaces it with DOCS_POLICY on its own routes). Neither Node nor Fastify sends a
 * `Server` or `X-Powered-By` header, so nothing names the software or its version.
 */
export function installSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply) => {
    setSecurityHeaders(reply);
  });
}

/** Also for answers given before any hook runs (a URL the router cannot read). */
export function setSecurityHeaders(reply: FastifyReply): void {
  reply.header('x-content-type-options', 'nosniff');
  reply.header('x-frame-options', 'DENY');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('content-security-policy', API_POLICY);
}
